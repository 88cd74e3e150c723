import { ChildProcess, spawn } from 'child_process';
import { randomBytes, randomInt } from 'crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { dirname, join } from 'path';

/**
 * `npm start`: runs the four services and the gateway as separate processes on this machine, against
 * local PostgreSQL, NATS and Redis, and waits until the gateway's GET /health is green and every service's
 * health port answers. Ctrl-C stops them all.
 *
 * Everything listens on 127.0.0.1 unless HOST says otherwise. The gateway takes PORT (3000) and the
 * services' health ports follow it (PORT+1 to PORT+4), then the gateway's own (PORT+5), so a second stack with another PORT,
 * CRM_NAMESPACE and DATABASE_URL runs beside the first. Each process's log is shown with a coloured
 * name and as readable lines (LOG_FORMAT=json keeps the JSON).
 */
const root = join(__dirname, '..', '..');
const apps = ['contacts', 'deals', 'events', 'webhooks', 'gateway'] as const;
const children: ChildProcess[] = [];
const COLOURS: Record<(typeof apps)[number], number> = { contacts: 36, deals: 35, events: 33, webhooks: 34, gateway: 32 };
const LEVEL_COLOURS: Record<string, number> = { trace: 90, debug: 90, info: 0, warn: 33, error: 31, fatal: 31 };
const useColour = process.stdout.isTTY || process.env.FORCE_COLOR !== undefined;
const paint = (code: number, text: string) => (useColour && code ? `\x1b[${code}m${text}\x1b[0m` : text);

/** One JSON log entry as `time level message key=value…`; anything else unchanged. */
function readable(line: string): string {
  if (process.env.LOG_FORMAT === 'json' || !line.startsWith('{')) return line;
  try {
    const { level, time, msg, service: _service, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const fields = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const clock = typeof time === 'string' ? time.slice(11, 23) : '';
    return `${clock} ${paint(LEVEL_COLOURS[String(level)] ?? 0, String(level).padEnd(5))} ${String(msg ?? '')}${fields ? ` ${paint(90, fields)}` : ''}`;
  } catch {
    return line;
  }
}

function devApiKey(): string {
  const file = join(root, '.data', 'dev-api-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let secret = '';
  for (let i = 0; i < 32; i++) secret += alphabet[randomInt(alphabet.length)];
  const key = `crm_${process.env.CRM_KEY_ENV === 'test' ? 'test' : 'live'}_${secret}`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * The key that encrypts webhook signing secrets at rest, kept in .data/webhook-secret-keys: it must stay
 * the same across restarts, or stored secrets could no longer be decrypted.
 */
function devWebhookSecretKeys(): string {
  const file = join(root, '.data', 'webhook-secret-keys');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const keys = `dev1:${randomBytes(32).toString('base64')}`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${keys}\n`, { mode: 0o600 });
  return keys;
}

function start(app: (typeof apps)[number], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [join(root, 'dist', 'apps', app, 'src', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `${paint(COLOURS[app], app.padEnd(8))} | `;
  const forward = (stream: NodeJS.WriteStream) => {
    let partial = '';
    return (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line) stream.write(`${prefix}${readable(line)}\n`);
    };
  };
  child.stdout!.on('data', forward(process.stdout));
  child.stderr!.on('data', forward(process.stderr));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`${prefix}exited (${signal ?? code}); stopping the stack\n`);
    stop(1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('exit', r))))).then(() => process.exit(code));
}

/** Polls until every URL answers 2xx; one deadline for all of them. */
async function waitForHealth(urls: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const url of urls) {
    let last = '';
    for (;;) {
      if (Date.now() >= deadline || stopping) throw new Error(`the stack did not become healthy: ${url}: ${last}`);
      try {
        const res = await fetch(url);
        if (res.ok) break;
        last = await res.text();
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

async function main(): Promise<void> {
  const explicitKey = process.env.CRM_BOOTSTRAP_API_KEY;
  const apiKey = explicitKey || devApiKey();
  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65530) throw new Error(`PORT must be an integer from 1 to 65530, got '${process.env.PORT}'`);
  const env = {
    ...process.env,
    HOST: host,
    PORT: String(port),
    CRM_BOOTSTRAP_API_KEY: apiKey,
    WEBHOOKS_SECRET_KEYS: process.env.WEBHOOKS_SECRET_KEYS || devWebhookSecretKeys(),
    // On a developer's machine the receiver under test is local and plain HTTP; production keeps both refused.
    WEBHOOKS_ALLOW_PRIVATE: process.env.WEBHOOKS_ALLOW_PRIVATE || 'true',
    WEBHOOKS_ALLOW_INSECURE: process.env.WEBHOOKS_ALLOW_INSECURE || 'true',
  };
  // The gateway's API listens on PORT; the services' health endpoints on the ports right after it, then the
  // gateway's (its probes, full status and metrics, which the API port does not serve).
  const healthPort = (app: (typeof apps)[number]) => port + 1 + apps.indexOf(app);
  apps.forEach((app) => start(app, { ...env, HEALTH_HOST: host, HEALTH_PORT: String(healthPort(app)) }));
  process.once('SIGINT', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  const local = host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${local}:${port}`;
  // The gateway's /health answers once the services answer over NATS, which they do a moment before their
  // own health ports listen; "ready" waits for those too, so every port printed or derived is open.
  const serviceProbes = apps.filter((app) => app !== 'gateway').map((app) => `http://${local}:${healthPort(app)}/health/live`);
  await waitForHealth([`http://${local}:${healthPort('gateway')}/health`, ...serviceProbes], 60_000);
  process.stdout.write(
    `\nCRM API ready at ${url}\n` +
      (explicitKey ? 'API key: the value of CRM_BOOTSTRAP_API_KEY\n' : `API key (read-write, kept in .data/dev-api-key): ${apiKey}\n`) +
      `Try: curl -H "X-Api-Key: ${explicitKey ? '$CRM_BOOTSTRAP_API_KEY' : apiKey}" ${url}/contacts\n\n`,
  );
}

main().catch((err: Error) => {
  process.stderr.write(`start: ${err.message}\n`);
  stop(1);
});
