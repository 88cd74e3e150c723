import { ChildProcess, spawn } from 'child_process';
import { randomBytes, randomInt } from 'crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'fs';
import { dirname, join } from 'path';

/**
 * `npm start`: runs the four services and the gateway as separate processes on this machine, against
 * local PostgreSQL, NATS and Redis, and waits until GET /health is green. Ctrl-C stops them all.
 */
const root = join(__dirname, '..', '..');
const apps = ['contacts', 'deals', 'events', 'webhooks', 'gateway'] as const;
const children: ChildProcess[] = [];

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

function start(app: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [join(root, 'dist', 'apps', app, 'src', 'main.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `${app.padEnd(8)} | `;
  const forward = (stream: NodeJS.WriteStream) => (chunk: Buffer) =>
    stream.write(chunk.toString().replace(/(^|\n)(?=.)/g, `$1${prefix}`));
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

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline && !stopping) {
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) return;
      last = await res.text();
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the stack did not become healthy: ${last}`);
}

async function main(): Promise<void> {
  const explicitKey = process.env.CRM_BOOTSTRAP_API_KEY;
  const apiKey = explicitKey || devApiKey();
  const env = { ...process.env, CRM_BOOTSTRAP_API_KEY: apiKey, WEBHOOKS_SECRET_KEYS: process.env.WEBHOOKS_SECRET_KEYS || devWebhookSecretKeys() };
  for (const app of apps) {
    // Services take fixed local health ports; the gateway listens on PORT (3000).
    start(app, env);
  }
  process.once('SIGINT', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  const url = `http://127.0.0.1:${process.env.PORT ?? 3000}`;
  await waitForHealth(url, 60_000);
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
