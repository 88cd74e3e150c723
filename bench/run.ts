import autocannon from 'autocannon';
import { spawn } from 'child_process';
import { createServer, Server } from 'http';
import { mkdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { BatchResult, batchTable, batchWrites } from './batch-writes';
import { SustainedResult, sustainedWrites } from './sustained-writes';
import { alphanumeric, APPS, CONNECTIONS, createContactsLoad, DURATION_S, load, machine, percentile, Row, rssMiB, startBenchStack } from './bench-stack';

/**
 * Benchmarks the system as it is deployed: five separate processes built from dist/, on a database and
 * NATS/Redis namespace of their own, driven over HTTP from this machine. Prints a Markdown table and
 * writes the raw numbers to bench/results/. Run it on an otherwise idle machine: `npm run bench`.
 * `BENCH_ONLY=batch` runs only the batch-write section (bench/batch-writes.ts), on a stack of its own.
 */
const ROOT = join(__dirname, '..', '..');
const LAG_SAMPLES = Number(process.env.BENCH_LAG_SAMPLES ?? 200);
const SUSTAINED_RATE = Number(process.env.BENCH_SUSTAINED_RATE ?? 200);
const SUSTAINED_S = Number(process.env.BENCH_SUSTAINED_S ?? 60);
const ONLY = process.env.BENCH_ONLY;

async function main(): Promise<void> {
  if (ONLY === 'batch') return batchOnly();
  if (ONLY) throw new Error(`BENCH_ONLY=${ONLY}: the only section that runs alone is batch`);
  const stack = await startBenchStack(ROOT);
  const { api, key, children, post } = stack;
  const receiver: Server = createServer();
  const rows: Row[] = [];
  const pairs: { stack: Row; bare: Row }[] = [];
  let bare: Bare | undefined;
  let lag: Record<string, number> = {};
  let sustained: SustainedResult | undefined;
  let memory: Record<string, number> = {};
  let batch: BatchResult | undefined;
  const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
  try {
    bare = await startBare(stack.databaseUrl);
    const bareApi = bare.api;
    const barePost = async (path: string, body: unknown) =>
      ((await (await fetch(`${bareApi}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { data: any }).data;
    /** The same load on the stack, then on the bare handler, one right after the other. */
    const both = async (scenario: string, path: (api: string) => string, options: () => Partial<autocannon.Options>, note: string) => {
      const row = await load(scenario, `${api}${path('stack')}`, key, options(), note);
      rows.push(row);
      pairs.push({ stack: row, bare: await load(scenario, `${bareApi}${path('bare')}`, key, options(), note) });
    };

    await both('POST /contacts', () => '/contacts', createContactsLoad, 'one transaction: row + outbox event');
    const contact = await post('/contacts', { email: `probe-${alphanumeric(6)}@bench.example`, first_name: 'Probe' });
    await both(
      'GET /contacts/:id',
      () => `/contacts/${contact.id}`,
      () => ({}),
      'full record with relationships',
    );
    await both(
      'GET /contacts?limit=50',
      () => '/contacts?limit=50',
      () => ({}),
      'first page of the contacts written above',
    );
    await both(
      'GET /contacts?search=c1&limit=50',
      () => '/contacts?search=c1&limit=50',
      () => ({}),
      'trigram search',
    );
    await both(
      'GET /events?limit=200',
      () => '/events?limit=200',
      () => ({}),
      'oldest page of the log',
    );

    const pipeline = await post('/pipelines', {
      name: 'Bench',
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Qualified', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    const newDeal = { name: 'Bench deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1000, contact_id: contact.id };
    await both(
      'POST /deals',
      () => '/deals',
      () => ({ method: 'POST', body: JSON.stringify(newDeal) }),
      'checks the contact over NATS, writes history + event',
    );

    // Stage moves spread over more deals than connections, each deal going back and forth between two open stages.
    const deals: Record<string, string[]> = { stack: [], bare: [] };
    for (let i = 0; i < 2 * CONNECTIONS; i++) {
      deals.stack.push((await post('/deals', newDeal)).id);
      deals.bare.push((await barePost('/deals', newDeal)).id);
    }
    let target: 'stack' | 'bare' = 'stack';
    const moves = (): Partial<autocannon.Options> => {
      const list = deals[target];
      const inSecond = list.map(() => false);
      let n = 0;
      return {
        method: 'POST',
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => {
              const i = n++ % list.length;
              inSecond[i] = !inSecond[i];
              const stageId = pipeline.stages[inSecond[i] ? 1 : 0].id;
              return { ...req, path: `/deals/${list[i]}/stage`, body: JSON.stringify({ stage_id: stageId }) };
            },
          },
        ],
      };
    };
    rows.push(await load('POST /deals/:id/stage', `${api}/deals`, key, moves(), 'locks the deal, writes history + event'));
    target = 'bare';
    pairs.push({ stack: rows[rows.length - 1], bare: await load('POST /deals/:id/stage', `${bareApi}/deals`, key, moves(), '') });

    // Single against batch writes, before any webhook is subscribed: the same work as with BENCH_ONLY=batch.
    batch = await batchWrites(stack);

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
    // The same path under a steady write load: every write's delivery timed from the moment it was sent.
    sustained = await sustainedWrites(api, key, arrivals, { rate: SUSTAINED_RATE, seconds: SUSTAINED_S });
    memory = Object.fromEntries(APPS.map((app) => [app, rssMiB(children[app].pid!)]));
  } finally {
    receiver.close();
    bare?.stop();
    await stack.stop();
  }

  const stamp = new Date().toISOString();
  const lines = [
    `Run ${stamp} on ${machine()}; ${CONNECTIONS} connections, ${DURATION_S} s per scenario; load generator on the same machine.`,
    '',
    '| Scenario | req/s | p50 ms | p99 ms | errors | Notes |',
    '|---|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.scenario} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} | ${r.note} |`),
    '',
    `Change to event (${LAG_SAMPLES} sequential writes): in GET /events p50 ${lag.log_p50_ms} ms, p99 ${lag.log_p99_ms} ms; at a webhook receiver p50 ${lag.webhook_p50_ms} ms, p99 ${lag.webhook_p99_ms} ms.`,
    '',
    `Sustained writes: POST /contacts at ${sustained?.target_rate}/s for ${sustained?.seconds} s, open loop (achieved ${sustained?.achieved_rate}/s; ${sustained?.acknowledged} of ${sustained?.sent} acknowledged, ${sustained?.errors} errors; write p50 ${sustained?.write_p50_ms} ms, p99 ${sustained?.write_p99_ms} ms).`,
    `Sent to webhook received: p50 ${sustained?.webhook_p50_ms} ms, p95 ${sustained?.webhook_p95_ms} ms, p99 ${sustained?.webhook_p99_ms} ms, max ${sustained?.webhook_max_ms} ms; ${sustained?.delivered} delivered, ${sustained?.missing} acknowledged writes not delivered.`,
    '',
    `Resident memory after the run (MiB): ${Object.entries(memory)
      .map(([app, mib]) => `${app} ${mib}`)
      .join(', ')}.`,
    '',
    ...batchSection(batch!),
    '',
    'Against the bare baseline (bench/bare.ts: Node http + pg, the same SQL; stack run first, bare right after):',
    '',
    '| Scenario | stack req/s | bare req/s | req/s stack/bare | stack p50 ms | bare p50 ms | p50 stack/bare | stack p99 ms | bare p99 ms | errors stack/bare |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...pairs.map(
      ({ stack: a, bare: b }) =>
        `| ${a.scenario} | ${a.requests_per_s} | ${b.requests_per_s} | ${ratio(a.requests_per_s, b.requests_per_s)} | ${a.p50_ms} | ${b.p50_ms} | ${ratio(a.p50_ms, b.p50_ms)} | ${a.p99_ms} | ${b.p99_ms} | ${a.errors}/${b.errors} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', `${stamp.replace(/[:.]/g, '-')}.json`),
    JSON.stringify({ stamp, machine: machine(), rows, bare: pairs.map((p) => p.bare), lag, sustained, memory, batch }, null, 2),
  );
}

/** `BENCH_ONLY=batch`: the batch-write section alone, on a stack of its own. */
async function batchOnly(): Promise<void> {
  const stack = await startBenchStack(ROOT);
  let batch: BatchResult;
  try {
    batch = await batchWrites(stack);
  } finally {
    await stack.stop();
  }
  const stamp = new Date().toISOString();
  const lines = [`Run ${stamp} on ${machine()}; BENCH_ONLY=batch; load generator on the same machine.`, '', ...batchSection(batch)];
  process.stdout.write(`${lines.join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', `${stamp.replace(/[:.]/g, '-')}.json`),
    JSON.stringify({ stamp, machine: machine(), only: 'batch', batch }, null, 2),
  );
}

function batchSection(batch: BatchResult): string[] {
  return [
    `Batch writes of contacts (bench/batch-writes.ts): ${batch.records_per_scenario} records per scenario, batches of ${batch.batch_size}; every answer and item checked. CPU is the five processes' user + system time, read after the stack went quiet.`,
    '',
    ...batchTable(batch),
  ];
}

function ratio(a: number, b: number): string {
  return b ? `${(a / b).toFixed(2)}x` : '—';
}

interface Bare {
  api: string;
  stop(): void;
}

/** Starts bench/bare.ts (compiled) as a child process on the stack's database. */
async function startBare(databaseUrl: string): Promise<Bare> {
  const port = 3800 + Math.floor(Math.random() * 90);
  const child = spawn(process.execPath, [join(__dirname, 'bare.js')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare baseline exited with ${code}`)));
    child.stdout!.once('data', () => resolve());
  });
  return { api: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
