import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'fs';
import { createServer, Server } from 'http';
import { cpus, totalmem } from 'os';
import { join } from 'path';
import { Client } from 'pg';

/**
 * Benchmarks the system as it is deployed: five separate processes built from dist/, on a database and
 * NATS/Redis namespace of their own, driven over HTTP from this machine. Prints a Markdown table and
 * writes the raw numbers to bench/results/. Run it on an otherwise idle machine: `npm run bench`.
 */
const ROOT = join(__dirname, '..', '..');
const APPS = ['contacts', 'deals', 'events', 'webhooks', 'gateway'] as const;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LAG_SAMPLES = Number(process.env.BENCH_LAG_SAMPLES ?? 200);

interface Row {
  scenario: string;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  note: string;
}

function alphanumeric(n: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(n), (b) => alphabet[b % 62]).join('');
}

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await fetch(url).catch(() => undefined))?.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become healthy`);
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function load(scenario: string, url: string, key: string, options: Partial<autocannon.Options>, note = ''): Promise<Row> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
    ...options,
  });
  const errors = result.errors + result.timeouts + result.non2xx;
  return {
    scenario,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors,
    note,
  };
}

async function main(): Promise<void> {
  const namespace = `bench${randomBytes(4).toString('hex')}`;
  const dbUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm');
  dbUrl.pathname = `/crm_${namespace}`;
  const key = `crm_live_${alphanumeric(32)}`;
  const port = 3900 + Math.floor(Math.random() * 90);
  const env = {
    ...process.env,
    DATABASE_URL: dbUrl.toString(),
    CRM_NAMESPACE: namespace,
    CRM_BOOTSTRAP_API_KEY: key,
    PORT: String(port),
    HOST: '127.0.0.1',
    HEALTH_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_BURST: '1000000',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
  };
  const children: Record<string, ChildProcess> = {};
  const healthPorts: Record<string, number> = { contacts: port + 1, deals: port + 2, events: port + 3, webhooks: port + 4 };
  for (const app of APPS) {
    children[app] = spawn(process.execPath, [join(ROOT, 'dist', 'apps', app, 'src', 'main.js')], {
      env: { ...env, HEALTH_PORT: String(healthPorts[app] ?? 0) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const api = `http://127.0.0.1:${port}`;
  const receiver: Server = createServer();
  const rows: Row[] = [];
  let lag: Record<string, number> = {};
  let memory: Record<string, number> = {};
  try {
    await waitFor(`${api}/health`, 60_000);
    const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${api}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: any }).data;
    };

    let n = 0;
    rows.push(
      await load('POST /contacts', `${api}/contacts`, key, {
        method: 'POST',
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `c${n++}-${alphanumeric(6)}@bench.example`, first_name: 'Bench', stage: 'lead' }) }),
          },
        ],
      }, 'one transaction: row + outbox event'),
    );
    const contact = await post('/contacts', { email: `probe-${alphanumeric(6)}@bench.example`, first_name: 'Probe' });
    rows.push(await load('GET /contacts/:id', `${api}/contacts/${contact.id}`, key, {}, 'full record with relationships'));
    rows.push(await load('GET /contacts?limit=50', `${api}/contacts?limit=50`, key, {}, 'first page of the contacts written above'));
    rows.push(await load('GET /contacts?search=c1&limit=50', `${api}/contacts?search=c1&limit=50`, key, {}, 'trigram search'));
    rows.push(await load('GET /events?limit=200', `${api}/events?limit=200`, key, {}, 'oldest page of the log'));

    const pipeline = await post('/pipelines', {
      name: 'Bench',
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    rows.push(
      await load('POST /deals', `${api}/deals`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Bench deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1000, contact_id: contact.id }),
      }, 'checks the contact over NATS, writes history + event'),
    );

    // End-to-end lag: from a write's 201 to the event in GET /events, and to a webhook receiver.
    const arrivals = new Map<string, number>();
    receiver.on('request', (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const event = JSON.parse(body) as { data: { contact_id?: string } };
        if (event.data.contact_id) arrivals.set(event.data.contact_id, performance.now());
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookPort = (receiver.address() as { port: number }).port;
    await post('/webhooks', { name: 'bench', url: `http://127.0.0.1:${hookPort}/`, event_types: ['contact.created'] });
    let cursor = ((await (await fetch(`${api}/events?type=contact.created&limit=1`, { headers })).json()) as { next_cursor: string }).next_cursor;
    for (;;) {
      const page = (await (await fetch(`${api}/events?type=contact.created&limit=200&cursor=${cursor}`, { headers })).json()) as {
        has_more: boolean;
        next_cursor: string;
      };
      cursor = page.next_cursor;
      if (!page.has_more) break;
    }
    const logLags: number[] = [];
    const hookLags: number[] = [];
    for (let i = 0; i < LAG_SAMPLES; i++) {
      const started = performance.now();
      const created = await post('/contacts', { email: `lag${i}-${alphanumeric(6)}@bench.example` });
      for (;;) {
        const page = (await (await fetch(`${api}/events?type=contact.created&cursor=${cursor}`, { headers })).json()) as {
          data: { data: { contact_id: string } }[];
          next_cursor: string;
        };
        cursor = page.next_cursor;
        if (page.data.some((e) => e.data.contact_id === created.id)) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      logLags.push(performance.now() - started);
      while (!arrivals.has(created.id)) await new Promise((r) => setTimeout(r, 2));
      hookLags.push(arrivals.get(created.id)! - started);
    }
    lag = {
      log_p50_ms: Math.round(percentile(logLags, 50)),
      log_p99_ms: Math.round(percentile(logLags, 99)),
      webhook_p50_ms: Math.round(percentile(hookLags, 50)),
      webhook_p99_ms: Math.round(percentile(hookLags, 99)),
    };
    memory = Object.fromEntries(APPS.map((app) => [app, rssMiB(children[app].pid!)]));
  } finally {
    receiver.close();
    for (const child of Object.values(children)) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    const admin = new URL(dbUrl.toString());
    admin.pathname = '/postgres';
    const pg = new Client({ connectionString: admin.toString() });
    await pg.connect();
    await pg.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await pg.end();
  }

  const machine = `${cpus().length} × ${cpus()[0].model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const stamp = new Date().toISOString();
  const lines = [
    `Run ${stamp} on ${machine}; ${CONNECTIONS} connections, ${DURATION_S} s per scenario; load generator on the same machine.`,
    '',
    '| Scenario | req/s | p50 ms | p99 ms | errors | Notes |',
    '|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.scenario} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.note} |`),
    '',
    `Change to event (${LAG_SAMPLES} sequential writes): in GET /events p50 ${lag.log_p50_ms} ms, p99 ${lag.log_p99_ms} ms; at a webhook receiver p50 ${lag.webhook_p50_ms} ms, p99 ${lag.webhook_p99_ms} ms.`,
    '',
    `Resident memory after the run (MiB): ${Object.entries(memory).map(([app, mib]) => `${app} ${mib}`).join(', ')}.`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `${stamp.replace(/[:.]/g, '-')}.json`), JSON.stringify({ stamp, machine, rows, lag, memory }, null, 2));
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
