import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { join } from 'path';
import { machine, runBenchmark, withBenchStack } from './bench-stack';
import { SustainedResult, sustainedWrites } from './sustained-writes';

/**
 * The webhook tail under a steady write load: `POST /contacts` at a fixed rate (open loop) for a fixed
 * time, `BENCH_RUNS` times on one stack, each write timed from its send to its `contact.created`
 * delivery at a receiver that answers at once. Beside it, unless `BENCH_SLOW_MS=0`, a second
 * subscription to the same events whose receiver takes `BENCH_SLOW_MS` to answer each one: the fast
 * receiver's tail shows whether the slow one holds it up. `npm run bench:webhooks`.
 */
const ROOT = join(__dirname, '..', '..');
const RATE = Number(process.env.BENCH_SUSTAINED_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SUSTAINED_S ?? 60);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
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

async function main(): Promise<void> {
  const arrivals = new Map<string, number>();
  let slowAnswered = 0;
  const fast = await listen((_req, res, body) => {
    const event = JSON.parse(body) as { data: { contact_id?: string } };
    if (event.data.contact_id) arrivals.set(event.data.contact_id, performance.now());
    res.writeHead(204).end();
  });
  const slow = await listen((_req, res) => {
    setTimeout(() => {
      slowAnswered++;
      res.writeHead(204).end();
    }, SLOW_MS);
  });
  const runs: SustainedResult[] = [];
  try {
    await withBenchStack(ROOT, async ({ api, key, post }) => {
      await post('/webhooks', { name: 'fast', url: `http://127.0.0.1:${portOf(fast)}/`, event_types: ['contact.created'] });
      if (SLOW_MS > 0) await post('/webhooks', { name: 'slow', url: `http://127.0.0.1:${portOf(slow)}/`, event_types: ['contact.created'] });
      await sustainedWrites(api, key, arrivals, { rate: WARMUP_RATE, seconds: WARMUP_S });
      for (let i = 0; i < RUNS; i++) runs.push(await sustainedWrites(api, key, arrivals, { rate: RATE, seconds: SECONDS }));
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
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
