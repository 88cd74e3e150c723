import { readFileSync } from 'fs';
import { createServer, Server } from 'http';
import { join } from 'path';
import { Client } from 'pg';
import { alphanumeric, BenchStack, machine, percentile, runBenchmark, withBenchStack } from './bench-stack';

/**
 * Webhook filters against the same subscriptions without them, on one stack: `BENCH_SUBSCRIPTIONS`
 * subscriptions to contact.created, first unfiltered, then each given a three-condition filter that one
 * write in ten satisfies, while POST /contacts arrives at `BENCH_SUSTAINED_RATE` for `BENCH_SUSTAINED_S`.
 * Reports deliveries against what should arrive (every matching event, none other), the webhooks
 * process's CPU per event, and write-to-delivery p50/p99. Then a filtered GET /events over a log of
 * `BENCH_LOG_EVENTS` events of which one in a thousand matches: time and events tested per page.
 * The scale is 1000 subscriptions, 200 writes/s for 60 s and a 1,000,000-event log. `npm run bench:filters`.
 */
const ROOT = join(__dirname, '..', '..');
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 1000);
const RATE = Number(process.env.BENCH_SUSTAINED_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SUSTAINED_S ?? 60);
const LOG_EVENTS = Number(process.env.BENCH_LOG_EVENTS ?? 1_000_000);
const FILTER = { 'actor.type': 'api_key', via: { $in: ['api', 'batch'] }, 'data.email': { $starts_with: 'match-' } };

const cpuMsOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

interface Phase {
  name: string;
  writes: number;
  matching: number;
  expected: number;
  delivered: number;
  wrong: number;
  cpuMsPerEvent: number;
  p50: number;
  p99: number;
}

async function phase(stack: BenchStack, name: string, filtered: boolean, arrivals: Array<{ email: string; at: number }>): Promise<Phase> {
  arrivals.length = 0;
  const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
  const sentAt = new Map<string, number>();
  const pid = stack.children.webhooks.pid!;
  const cpuBefore = cpuMsOf(pid);
  const inFlight: Promise<unknown>[] = [];
  const started = performance.now();
  for (let i = 0; i < RATE * SECONDS; i++) {
    const due = started + (i * 1000) / RATE;
    if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
    const email = `${i % 10 === 0 ? 'match' : 'other'}-${alphanumeric(10).toLowerCase()}@bench.example`;
    sentAt.set(email, performance.now());
    inFlight.push(fetch(`${stack.api}/contacts`, { method: 'POST', headers, body: JSON.stringify({ email }) }).then((r) => r.arrayBuffer()));
  }
  await Promise.all(inFlight);
  const matching = [...sentAt.keys()].filter((e) => e.startsWith('match-')).length;
  const expected = (filtered ? matching : sentAt.size) * SUBSCRIPTIONS;
  // Settles when every expected delivery arrived, or nothing arrived for 20 s.
  for (let last = -1, quietSince = performance.now(); arrivals.length < expected && performance.now() - quietSince < 20_000;) {
    await new Promise((r) => setTimeout(r, 500));
    if (arrivals.length !== last) [last, quietSince] = [arrivals.length, performance.now()];
  }
  const ours = arrivals.filter((a) => sentAt.has(a.email));
  const latencies = ours.map((a) => a.at - sentAt.get(a.email)!);
  return {
    name,
    writes: sentAt.size,
    matching,
    expected,
    delivered: ours.length,
    wrong: filtered ? ours.filter((a) => !a.email.startsWith('match-')).length : 0,
    cpuMsPerEvent: Number(((cpuMsOf(pid) - cpuBefore) / sentAt.size).toFixed(2)),
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
  };
}

/** Fills the log directly (the writer's own columns), one event in a thousand carrying the rare value. */
async function seedLog(databaseUrl: string): Promise<void> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    await pg.query(
      `INSERT INTO events.events (position, id, type, occurred_at, actor, via, request_id, data, recorded_at)
       SELECT 1000000000 + n, 'evt_bench' || lpad(n::text, 17, '0'), 'contact.updated', now(), '{"type":"api_key","id":"key_bench"}', 'api', NULL,
              jsonb_build_object('contact_id', 'cont_' || n, 'changed', jsonb_build_array('stage'), 'previous', '{"stage":"lead"}'::jsonb,
                                 'current', jsonb_build_object('stage', CASE WHEN n % 1000 = 0 THEN 'customer' ELSE 'prospect' END)),
              now()
       FROM generate_series(1, $1::int) AS n`,
      [LOG_EVENTS],
    );
  } finally {
    await pg.end();
  }
}

async function main(): Promise<void> {
  const arrivals: Array<{ email: string; at: number }> = [];
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const email = (JSON.parse(body) as { data: { email?: string } }).data.email;
      if (email) arrivals.push({ email, at: performance.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`;
  const phases: Phase[] = [];
  const pages: string[] = [];
  try {
    await withBenchStack(
      ROOT,
      async (stack) => {
        const ids: string[] = [];
        for (let i = 0; i < SUBSCRIPTIONS; i++) ids.push((await stack.post('/webhooks', { name: `s${i}`, url, event_types: ['contact.created'] })).id);
        phases.push(await phase(stack, 'without filters', false, arrivals));
        const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
        for (const id of ids) await fetch(`${stack.api}/webhooks/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ filter: FILTER }) });
        phases.push(await phase(stack, 'with a 3-condition filter (1 in 10 match)', true, arrivals));

        await seedLog(stack.databaseUrl);
        const filter = encodeURIComponent(JSON.stringify({ 'data.previous.stage': 'lead', 'data.current.stage': 'customer' }));
        let cursor = '';
        const times: number[] = [];
        let found = 0;
        for (let page = 0; page < 40; page++) {
          const t = performance.now();
          const res = (await (await fetch(`${stack.api}/events?type=contact.updated&limit=50&filter=${filter}${cursor}`, { headers })).json()) as any;
          times.push(performance.now() - t);
          found += res.data.length;
          if (!res.has_more) break;
          cursor = `&cursor=${encodeURIComponent(res.next_cursor)}`;
        }
        pages.push(
          `GET /events?type=contact.updated&filter=… over ${LOG_EVENTS.toLocaleString('en')} seeded events (1 in 1000 matches), 5,000 events tested per page: ` +
            `${times.length} pages, ${found} matches, page p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms.`,
        );
      },
      { env: { WEBHOOKS_MAX_SUBSCRIPTIONS: String(Math.max(SUBSCRIPTIONS, 100)), WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } },
    );
  } finally {
    receiver.close();
  }
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}: ${SUBSCRIPTIONS} subscriptions to contact.created, POST /contacts at ${RATE}/s for ${SECONDS} s per phase.`,
    '',
    '| Phase | writes | matching | deliveries expected | delivered | non-matching delivered | webhooks CPU ms/event | write to delivery p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...phases.map(
      (p) => `| ${p.name} | ${p.writes} | ${p.matching} | ${p.expected} | ${p.delivered} | ${p.wrong} | ${p.cpuMsPerEvent} | ${p.p50} | ${p.p99} |`,
    ),
    '',
    ...pages,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
