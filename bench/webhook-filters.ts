import { loadavg } from 'os';
import { join } from 'path';
import { alphanumeric, BenchStack, cpuMs, machine, percentile, runBenchmark, withBenchStack } from './bench-stack';
import { BenchReceiver, DeliveryTally, diagnoseMissing, filterOf, holdLock, seedLog, Slots, sqlWindows } from './filters-support';

/**
 * Webhook filters against the same subscriptions without them, on one stack. `BENCH_SUBSCRIPTIONS`
 * subscriptions to contact.created, each in one of `BENCH_FILTER_GROUPS` groups; a group's filter has three
 * conditions (`actor.type`, `via` `$in`, `data.email` `$starts_with` the group's prefix), and one write in ten
 * carries a random group's prefix, so a matching event goes to SUBSCRIPTIONS / GROUPS subscriptions.
 *
 * Phases: the subscriptions without filters at `BENCH_UNFILTERED_RATE` writes/s for `BENCH_UNFILTERED_S` (every
 * write goes to every subscription: at the rate that would be 200,000 deliveries a second), the
 * same with filters at that rate, then with filters at `BENCH_SUSTAINED_RATE` for `BENCH_SUSTAINED_S`. After
 * each, the bench reads the phase's events back from GET /events, computes which subscription each must
 * reach with its own evaluator, and waits until every one of those deliveries arrived or `BENCH_DRAIN_S`
 * passed, then reports what is missing (and why, from the webhooks tables) and anything that should not
 * have come. CPU is measured from the first write until the last expected delivery (or the deadline), per event logged.
 *
 * Then GET /events with a filter one event in a thousand matches, over a log of `BENCH_LOG_EVENTS` seeded
 * events: time and matches per page, beside the same statements run on one client.
 * `BENCH_PARTS` (webhooks,log) picks the parts; `BENCH_LOCK` is a file to flock around the timed parts only.
 * The scale is the default. `npm run bench:filters`.
 */
const ROOT = join(__dirname, '..', '..');
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SUBSCRIPTIONS = env('BENCH_SUBSCRIPTIONS', 1000);
const GROUPS = env('BENCH_FILTER_GROUPS', 100);
const RATE = env('BENCH_SUSTAINED_RATE', 200);
const SECONDS = env('BENCH_SUSTAINED_S', 60);
const BASE_RATE = env('BENCH_UNFILTERED_RATE', 2);
const BASE_SECONDS = env('BENCH_UNFILTERED_S', 10);
const DRAIN_S = env('BENCH_DRAIN_S', 600);
const LOG_EVENTS = env('BENCH_LOG_EVENTS', 1_000_000);
const LOG_PAGES = env('BENCH_LOG_PAGES', 40);
const PARTS = (process.env.BENCH_PARTS ?? 'webhooks,log').split(',');
/** Writes in flight at once; later arrivals queue in the bench (their clock runs from arrival), so the bench's own receiver is not starved. */
const WRITE_CONNECTIONS = env('BENCH_WRITE_CONNECTIONS', 64);

const writeSlots = new Slots(WRITE_CONNECTIONS);

interface LoggedEvent {
  id: string;
  actor: { type: string } | null;
  via: string | null;
  data: { email?: string };
}

/** The bench's own reading of filterOf, written out rather than taken from the service's evaluator. */
function holds(group: number, e: LoggedEvent): boolean {
  return e.actor?.type === 'api_key' && (e.via === 'api' || e.via === 'batch') && (e.data.email ?? '').startsWith(`g${group}-`);
}

interface Phase extends DeliveryTally {
  name: string;
  drainS: number;
  cpuMsPerEvent: number;
  stackCpuMsPerEvent: number;
  p50: number;
  p99: number;
  notes: string[];
}

class FilterBench {
  private readonly receiver = new BenchReceiver();
  private readonly ids: string[] = [];
  /** Where the last phase's reading of the log ended. */
  private logCursor = '';
  private readonly headers: Record<string, string>;

  constructor(private readonly stack: BenchStack) {
    this.headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
  }

  async setUp(): Promise<void> {
    await this.receiver.start();
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      this.ids.push((await this.stack.post('/webhooks', { name: `s${i}`, url: `${this.receiver.url}/${i}`, event_types: ['contact.created'] })).id);
    }
    await this.readLog(new Set());
  }

  async addFilters(): Promise<void> {
    for (let i = 0; i < this.ids.length; i++) {
      const res = await fetch(`${this.stack.api}/webhooks/${this.ids[i]}`, {
        method: 'PATCH',
        headers: this.headers,
        body: JSON.stringify({ filter: filterOf(i % GROUPS) }),
      });
      if (!res.ok) throw new Error(`PATCH /webhooks: ${res.status} ${await res.text()}`);
    }
  }

  close(): void {
    this.receiver.close();
  }

  /**
   * The contact.created events after the last reading, until those of every email in `emails` (the
   * successful writes) are there, or until BENCH_DRAIN_S, when whatever is there is taken.
   */
  private async readLog(emails: Set<string>): Promise<LoggedEvent[]> {
    const seen = new Set<string>();
    const found: LoggedEvent[] = [];
    for (const deadline = performance.now() + DRAIN_S * 1000; ;) {
      const res = (await (await fetch(`${this.stack.api}/events?type=contact.created&limit=200${this.logCursor}`, { headers: this.headers })).json()) as {
        data: LoggedEvent[];
        has_more: boolean;
        next_cursor: string;
      };
      found.push(...res.data);
      for (const e of res.data) if (e.data.email) seen.add(e.data.email);
      this.logCursor = `&cursor=${encodeURIComponent(res.next_cursor)}`;
      if (res.has_more) continue;
      if ([...emails].every((e) => seen.has(e))) return found;
      if (performance.now() > deadline) {
        process.stderr.write(`the log lacks ${[...emails].filter((e) => !seen.has(e)).length} successful writes after ${DRAIN_S} s\n`);
        return found;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async phase(name: string, filtered: boolean, rate: number, seconds: number): Promise<Phase> {
    this.receiver.arrivals.clear();
    const sentAt = new Map<string, number>();
    const webhooksPid = this.stack.children.webhooks.pid!;
    const cpuBefore = cpuMs(webhooksPid);
    const stackBefore = this.stack.cpuMs();
    const failures = new Map<string, number>();
    const succeeded = new Set<string>();
    const inFlight: Promise<unknown>[] = [];
    const started = performance.now();
    for (let i = 0; i < rate * seconds; i++) {
      const due = started + (i * 1000) / rate;
      if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
      const prefix = i % 10 === 0 ? `g${Math.floor(Math.random() * GROUPS)}` : 'other';
      const email = `${prefix}-${alphanumeric(10).toLowerCase()}@bench.example`;
      sentAt.set(email, performance.now());
      inFlight.push(
        writeSlots.run(() =>
          fetch(`${this.stack.api}/contacts`, { method: 'POST', headers: this.headers, body: JSON.stringify({ email }) })
            .then(async (r) => {
              const text = await r.text();
              if (r.status === 201) return void succeeded.add(email);
              const reason = `${r.status} ${(JSON.parse(text) as { error?: { message?: string } }).error?.message ?? ''}`;
              failures.set(reason, (failures.get(reason) ?? 0) + 1);
            })
            .catch((err: Error) => failures.set(err.message, (failures.get(err.message) ?? 0) + 1)),
        ),
      );
    }
    await Promise.all(inFlight);
    // A write that failed may still have committed (a timeout): what counts is what the log holds.
    const events = (await this.readLog(succeeded)).filter((e) => sentAt.has(e.data.email ?? ''));
    const expected = new Map<string, { subscriptionId: string; eventId: string; email: string }>();
    for (const e of events) {
      for (let s = 0; s < this.ids.length; s++) {
        if (!filtered || holds(s % GROUPS, e)) expected.set(BenchReceiver.key(s, e.id), { subscriptionId: this.ids[s], eventId: e.id, email: e.data.email! });
      }
    }
    const arrivedOf = () => [...expected.keys()].filter((k) => this.receiver.arrivals.has(k)).length;
    const deadline = performance.now() + DRAIN_S * 1000;
    let arrived = arrivedOf();
    for (let report = performance.now() + 10_000; arrived < expected.size && performance.now() < deadline; arrived = arrivedOf()) {
      await new Promise((r) => setTimeout(r, 200));
      if (performance.now() > report) {
        process.stderr.write(`${name}: ${arrived} of ${expected.size} deliveries after ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
        report += 10_000;
      }
    }
    const drainS = (performance.now() - started) / 1000 - seconds;
    const cpu = cpuMs(webhooksPid) - cpuBefore;
    const stackCpu = this.stack.cpuMs() - stackBefore;
    // Late arrivals of other phases are not ours; what is ours and not expected is a wrong delivery.
    const ownIds = new Set(events.map((e) => e.id));
    const unexpected = [...this.receiver.arrivals.keys()].filter((k) => ownIds.has(k.split('|')[1]) && !expected.has(k)).length;
    const duplicates = [...expected.keys()].filter((k) => (this.receiver.arrivals.get(k)?.count ?? 0) > 1).length;
    const latencies = [...expected.entries()]
      .filter(([k]) => this.receiver.arrivals.has(k))
      .map(([k, v]) => this.receiver.arrivals.get(k)!.at - sentAt.get(v.email)!);
    const missing = [...expected.entries()].filter(([k]) => !this.receiver.arrivals.has(k)).map(([, v]) => v);
    return {
      name,
      writes: sentAt.size,
      failedWrites: [...failures.values()].reduce((a, b) => a + b, 0),
      expected: expected.size,
      delivered: arrived,
      missing: missing.length,
      unexpected,
      duplicates,
      drainS: Math.max(0, Math.round(drainS)),
      cpuMsPerEvent: Number((cpu / Math.max(1, events.length)).toFixed(2)),
      stackCpuMsPerEvent: Number((stackCpu / Math.max(1, events.length)).toFixed(2)),
      p50: Math.round(percentile(latencies, 50)),
      p99: Math.round(percentile(latencies, 99)),
      notes: [
        ...(failures.size ? [`failed writes: ${JSON.stringify(Object.fromEntries(failures))}`] : []),
        ...(await diagnoseMissing(this.stack.databaseUrl, missing)),
      ],
    };
  }

  /** Pages of GET /events with the rare filter, from the start of the seeded log. */
  async logPages(): Promise<string[]> {
    const filter = encodeURIComponent(JSON.stringify({ 'data.previous.stage': 'lead', 'data.current.stage': 'customer' }));
    let cursor = '';
    const times: number[] = [];
    const perPage: number[] = [];
    let wrong = 0;
    for (let page = 0; page < LOG_PAGES; page++) {
      const t = performance.now();
      const res = (await (
        await fetch(`${this.stack.api}/events?type=contact.updated&limit=50&filter=${filter}${cursor}`, { headers: this.headers })
      ).json()) as any;
      times.push(performance.now() - t);
      perPage.push(res.data.length);
      wrong += res.data.filter((e: any) => e.data.current.stage !== 'customer').length;
      if (!res.has_more) break;
      cursor = `&cursor=${encodeURIComponent(res.next_cursor)}`;
    }
    const found = perPage.reduce((a, b) => a + b, 0);
    return [
      `GET /events?type=contact.updated&limit=50&filter=… over ${LOG_EVENTS.toLocaleString('en')} seeded events (1 in 1,000 matches): ${times.length} pages from the start, ` +
        `${found} matches (${Math.min(...perPage)}–${Math.max(...perPage)} per page, so ${Math.min(...perPage) * 1000}–${Math.max(...perPage) * 1000} events examined per page), ` +
        `${wrong} not matching; page p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms, min ${Math.min(...times).toFixed(0)} ms.`,
    ];
  }
}

const row = (p: Phase) =>
  `| ${p.name} | ${p.writes} | ${p.failedWrites} | ${p.expected} | ${p.delivered} | ${p.missing} | ${p.unexpected} | ${p.duplicates} | ${p.drainS} | ` +
  `${p.cpuMsPerEvent} | ${p.stackCpuMsPerEvent} | ${p.p50} | ${p.p99} |`;

async function main(): Promise<void> {
  const phases: Phase[] = [];
  const log: string[] = [];
  const loads: string[] = [];
  const load = () =>
    loads.push(
      loadavg()
        .map((l) => l.toFixed(1))
        .join(' '),
    );
  await withBenchStack(
    ROOT,
    async (stack) => {
      const bench = new FilterBench(stack);
      try {
        if (PARTS.includes('webhooks')) {
          await bench.setUp();
          let release = await holdLock(process.env.BENCH_LOCK);
          load();
          phases.push(await bench.phase(`without filters, ${BASE_RATE}/s for ${BASE_SECONDS} s`, false, BASE_RATE, BASE_SECONDS));
          release();
          await bench.addFilters();
          release = await holdLock(process.env.BENCH_LOCK);
          phases.push(await bench.phase(`with filters, ${BASE_RATE}/s for ${BASE_SECONDS} s`, true, BASE_RATE, BASE_SECONDS));
          phases.push(await bench.phase(`with filters, ${RATE}/s for ${SECONDS} s`, true, RATE, SECONDS));
          load();
          release();
        }
        if (PARTS.includes('log')) {
          await seedLog(stack.databaseUrl, LOG_EVENTS);
          const release = await holdLock(process.env.BENCH_LOCK);
          load();
          log.push(...(await bench.logPages()));
          const sql = await sqlWindows(stack.databaseUrl, 5000, 9);
          log.push(
            `The same 5,000-event window on one pg client, no service: read in chunks of 500 as the service does, median ${sql.chunked.toFixed(0)} ms; ` +
              `in one statement ${sql.single.toFixed(0)} ms; ` +
              `with the filter's equalities as jsonb containment in SQL, median ${sql.contained.toFixed(0)} ms for ${sql.candidates} candidate rows.`,
          );
          load();
          release();
        }
      } finally {
        bench.close();
      }
    },
    { env: { WEBHOOKS_MAX_SUBSCRIPTIONS: String(Math.max(SUBSCRIPTIONS, 100)) } },
  );
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}, load average (1/5/15 min) at the timed parts: ${loads.join('; ')}.`,
    `${SUBSCRIPTIONS} subscriptions to contact.created in ${GROUPS} filter groups; one write in ten matches one group.`,
    '',
    '| Phase | writes | failed writes | deliveries expected | delivered | missing | not matching, delivered | duplicates | drain s after writes | webhooks CPU ms/event | stack CPU ms/event | write to delivery p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...phases.map(row),
    '',
    ...phases.flatMap((p) => p.notes.map((n) => `- ${p.name}: ${n}`)),
    ...log,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
