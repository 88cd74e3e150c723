import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { join } from 'path';
import { Client } from 'pg';
import { machine, percentile, runBenchmark, withBenchStack } from './bench-stack';
import { knobs } from './knobs';
import { SustainedResult, sustainedWrites } from './sustained-writes';

/**
 * The webhook tail under a steady write load: `POST /contacts` at a fixed rate (open loop) for a fixed
 * time, `BENCH_RUNS` times on one stack, each write timed from its send to its `contact.created`
 * delivery at a receiver that answers at once. Beside it, unless `BENCH_SLOW_MS=0`, a second
 * subscription to the same events whose receiver takes `BENCH_SLOW_MS` to answer each one: the fast
 * receiver's tail shows whether the slow one holds it up. `npm run bench:webhooks`.
 */
const ROOT = join(__dirname, '..', '..');
const { SUSTAINED_RATE: RATE, SUSTAINED_S: SECONDS, RUNS, SLOW_MS } = knobs('BENCH_', { SUSTAINED_RATE: 200, SUSTAINED_S: 60, RUNS: 3, SLOW_MS: 2000 });
const WARMUP_RATE = 150;
const WARMUP_S = 10;

function listen(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

/** Wall-clock milliseconds, comparable with PostgreSQL's `now()` on the same machine. */
const wallClock = () => performance.timeOrigin + performance.now();

interface StageRow {
  contact_id: string;
  written: number;
  taken_in: number;
  prepared: number;
}

/**
 * Where the time between a write and its delivery went, for the fast subscription's deliveries of the
 * measured runs: write to intake (the relay, JetStream and the intake's batching), intake to attempt
 * (the intake's commit, the dispatcher's wake-up and claim, and the wait behind earlier events), attempt
 * to arrival (signing and the HTTP request). Each mark is the start of the transaction that made it.
 */
async function stages(databaseUrl: string, webhookId: string, since: number, arrivedAt: Map<string, number>): Promise<string[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<StageRow>(
      `SELECT c.id AS contact_id, extract(epoch FROM c.created_at) * 1000 AS written,
              extract(epoch FROM e.received_at) * 1000 AS taken_in, extract(epoch FROM d.created_at) * 1000 AS prepared
       FROM webhooks.deliveries d
       JOIN webhooks.webhook_events e ON e.id = d.event_id
       JOIN contacts.contacts c ON c.id = (e.body::jsonb -> 'data' ->> 'contact_id')
       WHERE d.subscription_id = $1 AND d.status = 'success' AND c.created_at >= to_timestamp($2 / 1000.0)`,
      [webhookId, since],
    );
    const delivered = rows.filter((r) => arrivedAt.has(r.contact_id));
    const spans: Array<[string, (r: StageRow) => number]> = [
      ['write to intake', (r) => r.taken_in - r.written],
      ['intake to attempt', (r) => r.prepared - r.taken_in],
      ['attempt to arrival', (r) => arrivedAt.get(r.contact_id)! - r.prepared],
      ['write to arrival', (r) => arrivedAt.get(r.contact_id)! - r.written],
    ];
    const ms = (n: number) => n.toFixed(1);
    return [
      `Stages of the fast subscription's ${delivered.length} deliveries in the measured runs (ms, from the start of each transaction that marks one):`,
      '',
      '| Stage | p50 | p95 | p99 | max |',
      '|---|---:|---:|---:|---:|',
      ...spans.map(([name, of]) => {
        const values = delivered.map((r) => of({ ...r, written: Number(r.written), taken_in: Number(r.taken_in), prepared: Number(r.prepared) }));
        return `| ${name} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 95))} | ${ms(percentile(values, 99))} | ${ms(Math.max(...values))} |`;
      }),
    ];
  } finally {
    await pg.end();
  }
}

async function main(): Promise<void> {
  const arrivals = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  let slowAnswered = 0;
  const fast = await listen((_req, res, body) => {
    const event = JSON.parse(body) as { data: { contact_id?: string } };
    if (event.data.contact_id) {
      arrivals.set(event.data.contact_id, performance.now());
      arrivedAt.set(event.data.contact_id, wallClock());
    }
    res.writeHead(204).end();
  });
  const slow = await listen((_req, res) => {
    setTimeout(() => {
      slowAnswered++;
      res.writeHead(204).end();
    }, SLOW_MS);
  });
  const runs: SustainedResult[] = [];
  let breakdown: string[] = [];
  try {
    await withBenchStack(ROOT, async ({ api, key, post, databaseUrl }) => {
      const subscription = (await post('/webhooks', { name: 'fast', url: `http://127.0.0.1:${portOf(fast)}/`, event_types: ['contact.created'] })) as {
        id: string;
      };
      if (SLOW_MS > 0) await post('/webhooks', { name: 'slow', url: `http://127.0.0.1:${portOf(slow)}/`, event_types: ['contact.created'] });
      await sustainedWrites(api, key, arrivals, { rate: WARMUP_RATE, seconds: WARMUP_S });
      const measuredFrom = wallClock();
      for (let i = 0; i < RUNS; i++) runs.push(await sustainedWrites(api, key, arrivals, { rate: RATE, seconds: SECONDS }));
      breakdown = await stages(databaseUrl, subscription.id, measuredFrom, arrivedAt);
    });
  } finally {
    fast.close();
    slow.closeAllConnections();
    slow.close();
  }
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}: POST /contacts at ${RATE}/s for ${SECONDS} s, ${RUNS} runs after a ${WARMUP_S} s warm-up at ${WARMUP_RATE}/s;` +
      (SLOW_MS > 0 ? ` a second subscription answers each delivery after ${SLOW_MS} ms (it answered ${slowAnswered}).` : ' no slow subscription.'),
    '',
    '| Run | achieved writes/s | acknowledged | write p50 ms | write p99 ms | delivered | webhook p50 ms | p95 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r, i) =>
        `| ${i + 1} | ${r.achieved_rate} | ${r.acknowledged} of ${r.sent} | ${r.write_p50_ms} | ${r.write_p99_ms} | ${r.delivered} | ${r.webhook_p50_ms} | ${r.webhook_p95_ms} | ${r.webhook_p99_ms} | ${r.webhook_max_ms} |`,
    ),
    '',
    ...breakdown,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
