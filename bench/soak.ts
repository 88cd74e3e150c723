import { mkdirSync } from 'fs';
import { createServer, Server } from 'http';
import { loadavg, tmpdir } from 'os';
import { join } from 'path';
import { alphanumeric, APPS, BenchApp, BenchStack, Heap, heapOf, machine, metricsUrls, percentile, runBenchmark, withBenchStack } from './bench-stack';
import { Inspector } from './inspector';
import { knobs } from './knobs';

/**
 * The whole stack under a steady mixed load for SOAK_MINUTES (30 by default): memory that levels off or
 * does not. The rate is SOAK_FRACTION (0.6) of the mix's capacity, measured first with SOAK_CAPACITY_S of
 * closed-loop load, unless SOAK_RATE sets it. Sent open loop (each request at its moment): reads of one
 * contact and of a page, contact creations and deletions, deal updates, and a 50-item batch upsert every
 * SOAK_BATCH_EVERY_S; every contact creation is delivered to a local webhook receiver, and a poller
 * follows GET /events once a second. Every SOAK_SAMPLE_S each process's resident memory and V8 heap
 * (used / total, from its /metrics) are read, then a full collection is run through the process's
 * inspector (the stack is started with --inspect on loopback; the services carry no hook of their own)
 * and the used heap read again: what the process really retains. Errors and p99 are counted per
 * SOAK_BUCKET_MIN minutes. At the end each process's curve per SOAK_BUCKET_MIN minutes and its slope (MiB
 * per minute, least squares) over the last 15 minutes (the last half of a shorter run). SOAK_SNAPSHOT_AT
 * (minutes, e.g. `8,28`) takes heap snapshots of SOAK_SNAPSHOT_APPS (the JetStream consumers by default)
 * into SOAK_SNAPSHOT_DIR, to compare with bench/heap-diff. `npm run bench:soak`.
 */
const ROOT = join(__dirname, '..', '..');
const { MINUTES, FRACTION, CAPACITY_S, SAMPLE_S, BUCKET_MIN, BATCH_EVERY_S } = knobs('SOAK_', {
  MINUTES: 30,
  FRACTION: 0.6,
  CAPACITY_S: 15,
  SAMPLE_S: 30,
  BUCKET_MIN: 5,
  BATCH_EVERY_S: 20,
});
const BATCH_ITEMS = 50;
const SLOPE_MIN = Math.min(15, MINUTES / 2);
const SNAPSHOT_AT = (process.env.SOAK_SNAPSHOT_AT ?? '').split(',').filter(Boolean).map(Number);
const SNAPSHOT_APPS = (process.env.SOAK_SNAPSHOT_APPS ?? 'deals,events,webhooks').split(',') as BenchApp[];
const SNAPSHOT_DIR = process.env.SOAK_SNAPSHOT_DIR ?? join(tmpdir(), 'crm-soak-snapshots');
/** Requests answered slower than this count as errors (they would be, to a client with a timeout). */
const REQUEST_TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Bucket {
  requests: number;
  errors: number;
  latencies: number[];
  webhookLags: number[];
}

/** What one sample reads of a process, MiB: resident, V8's heap as served (used / total), used after a full collection. */
interface Reading extends Heap {
  usedAfterGc: number;
}

interface Sample {
  minute: number;
  heaps: Record<BenchApp, Reading>;
}

/** The mix, by share of requests: what each costs the stack differs, and together they touch every process. */
const MIX: Array<{ name: string; share: number }> = [
  { name: 'GET /contacts/:id', share: 0.42 },
  { name: 'GET /contacts?limit=50', share: 0.15 },
  { name: 'POST /contacts', share: 0.25 },
  { name: 'PATCH /deals/:id', share: 0.13 },
  { name: 'DELETE /contacts/:id', share: 0.05 },
];

class Load {
  private n = 0;
  readonly sentAt = new Map<string, number>();
  /** Contacts the load created, deleted oldest first (the deals service cleans up after each deletion). */
  private readonly created: string[] = [];

  constructor(
    private readonly stack: BenchStack,
    private readonly contacts: string[],
    private readonly deals: string[],
  ) {}

  private async request(method: string, path: string, body?: unknown): Promise<{ ok: boolean; data?: { id: string } }> {
    const res = await fetch(`${this.stack.api}${path}`, {
      method,
      headers: { 'X-Api-Key': this.stack.key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const json = (await res.json().catch(() => ({}))) as { data?: { id: string } };
    return { ok: res.ok, data: json.data };
  }

  /** One request of the mix, chosen by its share; answers whether it succeeded. */
  async one(): Promise<boolean> {
    const i = ++this.n;
    let pick = Math.random();
    const op = MIX.find((m) => (pick -= m.share) < 0)?.name ?? MIX[0].name;
    const pickOf = (ids: string[]) => ids[Math.floor(Math.random() * ids.length)];
    switch (op) {
      case 'GET /contacts/:id':
        return (await this.request('GET', `/contacts/${pickOf(this.contacts)}`)).ok;
      case 'GET /contacts?limit=50':
        return (await this.request('GET', '/contacts?limit=50')).ok;
      case 'POST /contacts': {
        const at = performance.now();
        const res = await this.request('POST', '/contacts', { email: `soak${i}-${alphanumeric(6)}@bench.example`, first_name: 'Soak' });
        if (res.data) {
          this.sentAt.set(res.data.id, at);
          this.created.push(res.data.id);
        }
        return res.ok;
      }
      case 'DELETE /contacts/:id': {
        const id = this.created.shift();
        if (!id) return (await this.request('GET', '/contacts?limit=50')).ok;
        const res = await fetch(`${this.stack.api}/contacts/${id}`, {
          method: 'DELETE',
          headers: { 'X-Api-Key': this.stack.key },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        return res.ok;
      }
      default:
        return (await this.request('PATCH', `/deals/${pickOf(this.deals)}`, { value: i, name: `Soak deal ${i}` })).ok;
    }
  }

  async batch(): Promise<boolean> {
    const items = Array.from({ length: BATCH_ITEMS }, (_, k) => ({ email: `soak-batch-${k}-${alphanumeric(4)}@bench.example`, title: `t${this.n}` }));
    return (await this.request('POST', '/contacts/batch', { operation: 'upsert', items })).ok;
  }
}

/** Completed requests per second of the mix with `connections` requests always outstanding. */
async function capacity(load: Load, seconds: number, connections = 16): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        await load.one().catch(() => false);
        done++;
      }
    }),
  );
  return done / seconds;
}

function receiver(arrived: (contactId: string) => void): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; data: { contact_id?: string } };
      if (event.type === 'contact.created' && event.data.contact_id) arrived(event.data.contact_id);
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Follows GET /events like a consumer would: the next page at once while there is more, else a second later. */
async function pollEvents(stack: BenchStack, running: () => boolean, bucket: () => Bucket): Promise<void> {
  let cursor: string | undefined;
  while (running()) {
    const at = performance.now();
    const b = bucket();
    b.requests++;
    try {
      const res = await fetch(`${stack.api}/events?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers: { 'X-Api-Key': stack.key },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const page = (await res.json()) as { has_more: boolean; next_cursor: string };
      if (!res.ok) throw new Error(String(res.status));
      b.latencies.push(performance.now() - at);
      cursor = page.next_cursor;
      if (!page.has_more) await sleep(1000);
    } catch {
      b.errors++;
      await sleep(1000);
    }
  }
}

async function retried<T>(read: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await read();
    } catch (err) {
      if (i >= attempts) throw err;
      await sleep(1000);
    }
  }
}

/** Least-squares slope of `value` over minutes, MiB per minute. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx ? sxy / sxx : 0;
}

async function main(): Promise<void> {
  const buckets: Bucket[] = [];
  const samples: Sample[] = [];
  const bucketCount = Math.ceil(MINUTES / BUCKET_MIN);
  let load: Load | undefined;
  let startedAt = 0;
  // What finishes after the end (the last requests in flight) counts in the last period.
  const bucket = () => {
    const index = Math.floor((performance.now() - startedAt) / (BUCKET_MIN * 60_000));
    return (buckets[Math.min(bucketCount - 1, Math.max(0, index))] ??= { requests: 0, errors: 0, latencies: [], webhookLags: [] });
  };
  const server = await receiver((id) => {
    const sent = load?.sentAt.get(id);
    if (sent === undefined || !startedAt) return;
    load!.sentAt.delete(id);
    bucket().webhookLags.push(performance.now() - sent);
  });
  let rate = 0;
  let capacityPerS = 0;
  const loadAt: string[] = [];
  const loadAverage = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ');
  const snapshots: string[] = [];
  try {
    await withBenchStack(
      ROOT,
      async (stack) => {
        const inspectors = Object.fromEntries(
          await Promise.all(APPS.map(async (app) => [app, await Inspector.connect(stack.inspectPorts[app]!)] as const)),
        ) as Record<BenchApp, Inspector>;
        try {
          const port = (server.address() as { port: number }).port;
          await stack.post('/webhooks', { name: 'soak', url: `http://127.0.0.1:${port}/`, event_types: ['contact.created'] });
          const pipeline = await stack.post('/pipelines', {
            name: 'Soak',
            stages: [
              { name: 'Open', type: 'open' },
              { name: 'Won', type: 'won' },
            ],
          });
          const contacts: string[] = [];
          const deals: string[] = [];
          for (let i = 0; i < 50; i++) contacts.push((await stack.post('/contacts', { email: `seed${i}-${alphanumeric(6)}@bench.example` })).id);
          for (let i = 0; i < 20; i++)
            deals.push((await stack.post('/deals', { name: `Soak ${i}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: i })).id);
          load = new Load(stack, contacts, deals);
          loadAt.push(loadAverage());
          capacityPerS = await capacity(load, CAPACITY_S);
          rate = Number(process.env.SOAK_RATE ?? Math.max(1, Math.round(capacityPerS * FRACTION)));
          process.stderr.write(
            `capacity ${capacityPerS.toFixed(0)} requests/s of the mix (load average ${loadAt[0]}); soaking at ${rate}/s for ${MINUTES} min\n`,
          );
          // The capacity run's backlog (relay, log, deliveries) drains before the clock starts.
          await sleep(10_000);
          load.sentAt.clear();
          startedAt = performance.now();
          const endAt = startedAt + MINUTES * 60_000;
          const running = () => performance.now() < endAt;
          const urls = metricsUrls(stack);
          const read = async (app: BenchApp): Promise<Reading> => {
            const heap = await heapOf(urls[app], stack.children[app].pid!);
            const { used } = await inspectors[app].heapAfterGc();
            return { ...heap, usedAfterGc: Math.round((used / 2 ** 20) * 10) / 10 };
          };
          const sample = async () => {
            const minute = (performance.now() - startedAt) / 60_000;
            const heaps = {} as Record<BenchApp, Reading>;
            try {
              // One process at a time, so no two pause for a full collection together.
              for (const app of APPS) heaps[app] = await retried(() => read(app));
              samples.push({ minute, heaps });
            } catch (err) {
              // On a machine this loaded a read can fail; a missing sample is better than a lost run.
              process.stderr.write(`sample at ${minute.toFixed(1)} min skipped: ${(err as Error).message}\n`);
            }
          };
          const pendingSnapshots = [...SNAPSHOT_AT];
          const sampler = (async () => {
            while (running()) {
              await sample();
              const last = samples[samples.length - 1];
              if (last)
                process.stderr.write(
                  `${last.minute.toFixed(1)} min (load ${loadAverage()}): ${APPS.map((app) => `${app} ${last.heaps[app].rss} / ${last.heaps[app].usedAfterGc}`).join(', ')} MiB resident / heap after GC\n`,
                );
              const minute = (performance.now() - startedAt) / 60_000;
              if (pendingSnapshots.length && minute >= pendingSnapshots[0]) {
                const at = pendingSnapshots.shift()!;
                mkdirSync(SNAPSHOT_DIR, { recursive: true });
                for (const app of SNAPSHOT_APPS) {
                  const file = join(SNAPSHOT_DIR, `${app}-${at}min.heapsnapshot`);
                  await inspectors[app]
                    .heapSnapshot(file)
                    .then(() => snapshots.push(file))
                    .catch((err: Error) => process.stderr.write(`heap snapshot of ${app} failed: ${err.message}\n`));
                  process.stderr.write(`heap snapshot ${file}\n`);
                }
              }
              await sleep(SAMPLE_S * 1000);
            }
            await sample();
          })();
          const poller = pollEvents(stack, running, bucket);
          const batches = (async () => {
            while (running()) {
              await sleep(BATCH_EVERY_S * 1000);
              const at = performance.now();
              const b = bucket();
              b.requests++;
              const ok = await load!.batch().catch(() => false);
              if (ok) b.latencies.push(performance.now() - at);
              else b.errors++;
            }
          })();
          const inFlight = new Set<Promise<void>>();
          for (let i = 0; running(); i++) {
            const wait = startedAt + (i * 1000) / rate - performance.now();
            if (wait > 1) await sleep(wait);
            const at = performance.now();
            const b = bucket();
            b.requests++;
            const p: Promise<void> = load
              .one()
              .catch(() => false)
              .then((ok) => {
                if (ok) b.latencies.push(performance.now() - at);
                else b.errors++;
                inFlight.delete(p);
              });
            inFlight.add(p);
          }
          await Promise.all([...inFlight, sampler, poller, batches]);
          loadAt.push(loadAverage());
        } finally {
          for (const inspector of Object.values(inspectors)) inspector.close();
        }
      },
      { inspect: true },
    );
  } finally {
    server.close();
  }
  process.stdout.write(`${report({ samples, buckets, rate, capacityPerS, loadAt, snapshots }).join('\n')}\n`);
}

function report(run: { samples: Sample[]; buckets: Bucket[]; rate: number; capacityPerS: number; loadAt: string[]; snapshots: string[] }): string[] {
  const { samples, buckets } = run;
  const fixed = (n: number, d = 1) => n.toFixed(d);
  // Samples under load only: the last one is taken after the load has stopped, when an idle process has
  // trimmed its heap (libs/common IdleHeapTrim), and would pull every slope down.
  const tail = samples.filter((s) => s.minute >= MINUTES - SLOPE_MIN && s.minute < MINUTES);
  const slopeOf = (app: BenchApp, of: (h: Reading) => number) => fixed(slope(tail.map((s) => [s.minute, of(s.heaps[app])])), 2);
  // Each period's curve point: the sample nearest its end (the first sample for minute 0).
  const marks = Array.from({ length: Math.ceil(MINUTES / BUCKET_MIN) + 1 }, (_, i) => Math.min(MINUTES, i * BUCKET_MIN));
  const nearest = (minute: number) => samples.reduce((a, b) => (Math.abs(b.minute - minute) < Math.abs(a.minute - minute) ? b : a));
  return [
    `Run ${new Date().toISOString()} on ${machine()}; load average (1 / 5 / 15 min) ${run.loadAt[0]} before the capacity run, ${run.loadAt[1]} at the end; ${MINUTES} min at ${run.rate} requests/s (${Math.round(FRACTION * 100)}% of the ${fixed(run.capacityPerS, 0)}/s the mix reached in ${CAPACITY_S} s closed loop${process.env.SOAK_RATE ? '; rate set by SOAK_RATE' : ''}), a ${BATCH_ITEMS}-item batch every ${BATCH_EVERY_S} s, a GET /events poller, contact.created delivered to a local receiver; a sample every ${SAMPLE_S} s, each with a full collection through the inspector.`,
    '',
    `Per ${BUCKET_MIN} minutes:`,
    '',
    '| Minutes | requests | errors | error rate | p50 ms | p99 ms | webhooks delivered | webhook p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...buckets.map(
      (b, i) =>
        `| ${i * BUCKET_MIN}–${(i + 1) * BUCKET_MIN} | ${b.requests} | ${b.errors} | ${fixed((100 * b.errors) / Math.max(1, b.requests), 2)}% | ${fixed(percentile(b.latencies, 50))} | ${fixed(percentile(b.latencies, 99))} | ${b.webhookLags.length} | ${fixed(percentile(b.webhookLags, 99))} |`,
    ),
    '',
    `Each process's curve, MiB: resident / V8 heap used after a full collection / V8 heap total (before it), the sample nearest each ${BUCKET_MIN} minutes:`,
    '',
    `| Minute | ${APPS.join(' | ')} |`,
    `|---:|${APPS.map(() => '---:').join('|')}|`,
    ...marks.map((m) => {
      const s = nearest(m);
      return `| ${fixed(s.minute)} | ${APPS.map((app) => `${s.heaps[app].rss} / ${s.heaps[app].usedAfterGc} / ${s.heaps[app].heapTotal}`).join(' | ')} |`;
    }),
    '',
    `Slope over the last ${fixed(SLOPE_MIN, 1)} minutes (minutes ${fixed(MINUTES - SLOPE_MIN, 1)}–${MINUTES}, ${tail.length} samples), MiB per minute; targets: resident ≤ 0.5, heap used after a full collection ≤ 0.2:`,
    '',
    '| Process | resident | V8 heap used after GC | V8 heap used (as served) | V8 heap total |',
    '|---|---:|---:|---:|---:|',
    ...APPS.map(
      (app) =>
        `| ${app} | ${slopeOf(app, (h) => h.rss)} | ${slopeOf(app, (h) => h.usedAfterGc)} | ${slopeOf(app, (h) => h.heapUsed)} | ${slopeOf(app, (h) => h.heapTotal)} |`,
    ),
    ...(run.snapshots.length ? ['', `Heap snapshots: ${run.snapshots.join(', ')}`] : []),
    '',
    'Each sample, MiB: resident (V8 heap used / total as served; used after a full collection):',
    '',
    `| Minute | ${APPS.join(' | ')} |`,
    `|---:|${APPS.map(() => '---:').join('|')}|`,
    ...samples.map(
      (s) =>
        `| ${fixed(s.minute)} | ${APPS.map((app) => `${s.heaps[app].rss} (${s.heaps[app].heapUsed} / ${s.heaps[app].heapTotal}; ${s.heaps[app].usedAfterGc})`).join(' | ')} |`,
    ),
  ];
}

runBenchmark(main);
