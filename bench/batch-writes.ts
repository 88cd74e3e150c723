import { readFileSync } from 'fs';
import { cpus } from 'os';
import { Client } from 'pg';
import { alphanumeric, BenchStack, percentile, settledCpuMs } from './bench-stack';

/** Items per batch request: the most one batch may hold (BatchLimits.items). */
export const BATCH_SIZE = 200;
/** Records each scenario writes; a whole number of batches. */
const RECORDS = Math.max(1, Math.round(Number(process.env.BENCH_BATCH_RECORDS ?? 2000) / BATCH_SIZE)) * BATCH_SIZE;
const SINGLES_CONCURRENCY = 8;
const BATCH_CONCURRENCY = 4;
/**
 * The stack counts as quiet when all its processes together use at most this much CPU in one settle window,
 * or 1.5 times what they use idle (timers, polls), whichever is more.
 */
const SETTLE_WINDOW_MS = 250;
const SETTLE_IDLE_CPU_MS = 20;
const SETTLE_MAX_MS = 20_000;
const IDLE_SAMPLE_MS = 2000;

export interface BatchRow {
  scenario: string;
  records: number;
  requests: number;
  seconds: number;
  records_per_s: number;
  cpu_ms_per_record: number;
  /** The same less what the stack uses idle over the same time (`idle_cpu_ms_per_s`): the cost of the writes alone. */
  cpu_ms_per_record_above_idle: number;
  /** The same CPU, process by process. */
  cpu_ms_per_record_by_process: Record<string, number>;
  /** records/s against the single POST /contacts scenario. */
  ratio_vs_singles: number;
  request_p50_ms: number;
  request_p99_ms: number;
  /** How busy the whole machine was while the requests ran, % of all cores: far above the stack's own share, something else was running. */
  machine_busy_pct: number;
  /** The stack's own share of that, % of all cores (its CPU during the requests, without the settle after). */
  stack_busy_pct: number;
  /** How long after its last answer the stack took to go quiet (outbox, event log, consumers): its CPU counts, its time does not. */
  settle_ms: number;
  note: string;
}

export interface BatchResult {
  records_per_scenario: number;
  batch_size: number;
  /** CPU the stack's processes use with no requests, ms per second, measured before the warm-up. */
  idle_cpu_ms_per_s: number;
  rows: BatchRow[];
}

interface ContactBody {
  email: string;
  first_name: string;
  last_name?: string;
  stage?: string;
}

interface ItemResult {
  index: number;
  status: number;
  data?: { id?: string; email?: string };
  error?: unknown;
}

/**
 * Single writes against batch writes of contacts, side by side on one stack: the same number of records
 * each way, as records per second of wall clock (first request sent to last answer) and as CPU of the
 * stack's five processes per record. A scenario's CPU is read from /proc before it starts and after the
 * stack has gone quiet again, so the work its writes leave behind (outbox relay, event log, consumers)
 * counts against it and not against the next one. Every answer and every item's status is checked: a
 * failed write ends the benchmark.
 */
export async function batchWrites(stack: BenchStack): Promise<BatchResult> {
  const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
  const suffix = alphanumeric(8).toLowerCase();
  const body = (prefix: string, i: number, firstName = 'Bench'): ContactBody => ({
    email: `${prefix}${i}-${suffix}@batch.bench.example`,
    first_name: firstName,
    last_name: 'Batch',
    stage: 'lead',
  });
  const bodies = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => body(prefix, i));
  const chunks = <T>(list: T[]): T[][] =>
    Array.from({ length: Math.ceil(list.length / BATCH_SIZE) }, (_, i) => list.slice(i * BATCH_SIZE, (i + 1) * BATCH_SIZE));

  /** One POST /contacts; fails unless it is a 201 with the new contact. */
  const single = async (contact: ContactBody): Promise<void> => {
    const res = await fetch(`${stack.api}/contacts`, { method: 'POST', headers, body: JSON.stringify(contact) });
    const text = await res.text();
    const answer = parse(text) as { data?: { id?: string; email?: string } } | undefined;
    if (res.status !== 201 || !answer?.data?.id || answer.data.email?.toLowerCase() !== contact.email.toLowerCase()) {
      throw new Error(`POST /contacts ${contact.email}: ${res.status} ${text.slice(0, 500)}`);
    }
  };

  /** One POST /contacts/batch; fails unless it is a 200 with item i answered `statuses[i]` for every item. */
  const batch = async (operation: 'create' | 'upsert', items: ContactBody[], statuses: number[]): Promise<void> => {
    const res = await fetch(`${stack.api}/contacts/batch`, { method: 'POST', headers, body: JSON.stringify({ operation, items, all_or_none: false }) });
    const text = await res.text();
    const answer = parse(text) as { data?: ItemResult[] } | undefined;
    if (res.status !== 200 || !Array.isArray(answer?.data))
      throw new Error(`POST /contacts/batch (${operation}, ${items.length} items): ${res.status} ${text.slice(0, 500)}`);
    const wrong = items.flatMap((item, i) => {
      const result = answer.data!.find((r) => r.index === i);
      const ok = result && result.status === statuses[i] && result.data?.id && result.data.email?.toLowerCase() === item.email.toLowerCase();
      return ok
        ? []
        : [
            `item ${i} (${item.email}): expected ${statuses[i]}, got ${result ? `${result.status} ${JSON.stringify(result.error ?? result.data)}` : 'no result'}`,
          ];
    });
    if (answer.data.length !== items.length) wrong.unshift(`${answer.data.length} results for ${items.length} items`);
    if (wrong.length)
      throw new Error(`POST /contacts/batch (${operation}): ${wrong.length} wrong answers of ${items.length}:\n  ${wrong.slice(0, 10).join('\n  ')}`);
  };

  /** Runs `tasks` `concurrency` at a time, returning each task's milliseconds and the wall-clock seconds of the whole. */
  const run = async (tasks: Array<() => Promise<void>>, concurrency: number) => {
    const ms: number[] = [];
    let next = 0;
    const started = performance.now();
    const worker = async () => {
      while (next < tasks.length) {
        const task = tasks[next++];
        const at = performance.now();
        await task();
        ms.push(performance.now() - at);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
    return { ms, seconds: (performance.now() - started) / 1000 };
  };

  // What the stack uses doing nothing, before any request.
  const idleFrom = stack.cpuMs();
  await new Promise((r) => setTimeout(r, IDLE_SAMPLE_MS));
  const idleMsPerS = ((stack.cpuMs() - idleFrom) * 1000) / IDLE_SAMPLE_MS;
  const quietMs = Math.max(SETTLE_IDLE_CPU_MS, (1.5 * idleMsPerS * SETTLE_WINDOW_MS) / 1000);

  const settled = () => settledCpuMs(stack, { quietMs, windowMs: SETTLE_WINDOW_MS, maxMs: SETTLE_MAX_MS });

  const rows: BatchRow[] = [];
  const measure = async (scenario: string, records: number, tasks: Array<() => Promise<void>>, concurrency: number, note: string) => {
    const { cpu: before, at: from } = await settled();
    const busyBefore = machineBusyMs();
    const { ms, seconds } = await run(tasks, concurrency);
    const busy = machineBusyMs() - busyBefore;
    const stackBusy = stack.cpuMs() - Object.values(before).reduce((a, b) => a + b, 0);
    const after = await settled();
    const pctOfMachine = (cpu: number) => Math.round((cpu * 100) / (seconds * 1000 * cpus().length));
    const idleMs = (idleMsPerS * (after.at - from)) / 1000;
    const perRecord = Object.fromEntries(Object.keys(before).map((app) => [app, (after.cpu[app] - before[app]) / records]));
    const recordsPerS = records / seconds;
    const singles = rows[0]?.records_per_s ?? recordsPerS;
    rows.push({
      scenario,
      records,
      requests: tasks.length,
      seconds: Number(seconds.toFixed(2)),
      records_per_s: Math.round(recordsPerS),
      cpu_ms_per_record: Number(
        Object.values(perRecord)
          .reduce((a, b) => a + b, 0)
          .toFixed(2),
      ),
      cpu_ms_per_record_above_idle: Number((Object.values(perRecord).reduce((a, b) => a + b, 0) - idleMs / records).toFixed(2)),
      cpu_ms_per_record_by_process: Object.fromEntries(Object.entries(perRecord).map(([app, ms]) => [app, Number(ms.toFixed(2))])),
      ratio_vs_singles: Number((recordsPerS / singles).toFixed(1)),
      request_p50_ms: Math.round(percentile(ms, 50)),
      request_p99_ms: Math.round(percentile(ms, 99)),
      machine_busy_pct: pctOfMachine(busy),
      stack_busy_pct: pctOfMachine(stackBusy),
      settle_ms: Math.round(after.waitedMs),
      note,
    });
  };
  const creates = (list: ContactBody[]) =>
    chunks(list).map(
      (items) => () =>
        batch(
          'create',
          items,
          items.map(() => 201),
        ),
    );

  // Warm-up, not measured: each path once, so the first scenario does not pay for JIT and cold pools.
  const warm = bodies('warm', 2 * BATCH_SIZE);
  await run(
    warm.slice(0, BATCH_SIZE).map((c) => () => single(c)),
    SINGLES_CONCURRENCY,
  );
  await run(creates(warm.slice(BATCH_SIZE)), 1);
  const warmUpsert = [...warm.slice(0, BATCH_SIZE / 2).map((c) => ({ ...c, first_name: 'Warm' })), ...bodies('warmnew', BATCH_SIZE / 2)];
  await batch(
    'upsert',
    warmUpsert,
    warmUpsert.map((_, i) => (i < BATCH_SIZE / 2 ? 200 : 201)),
  );

  const singles = bodies('single', RECORDS);
  await measure(
    `${RECORDS} × POST /contacts, ${SINGLES_CONCURRENCY} concurrent`,
    RECORDS,
    singles.map((c) => () => single(c)),
    SINGLES_CONCURRENCY,
    'one record per request',
  );
  await measure(
    `${RECORDS / BATCH_SIZE} × POST /contacts/batch create, sequential`,
    RECORDS,
    creates(bodies('seq', RECORDS)),
    1,
    `${BATCH_SIZE} creates per request, one at a time`,
  );
  await measure(
    `${RECORDS / BATCH_SIZE} × POST /contacts/batch create, ${BATCH_CONCURRENCY} concurrent`,
    RECORDS,
    creates(bodies('conc', RECORDS)),
    BATCH_CONCURRENCY,
    `${BATCH_SIZE} creates per request`,
  );
  // Upserts: in each batch half the items are contacts the singles wrote (a changed first name, so a real update), half new.
  const half = BATCH_SIZE / 2;
  const upserts: Array<() => Promise<void>> = [];
  for (let b = 0; b < RECORDS / BATCH_SIZE; b++) {
    const matched = singles.slice(b * half, (b + 1) * half).map((c) => ({ ...c, first_name: 'Upserted' }));
    const fresh = Array.from({ length: half }, (_, i) => body('ups', b * half + i));
    const items = [...matched, ...fresh];
    upserts.push(() =>
      batch(
        'upsert',
        items,
        items.map((_, i) => (i < half ? 200 : 201)),
      ),
    );
  }
  await measure(`${RECORDS / BATCH_SIZE} × POST /contacts/batch upsert, sequential`, RECORDS, upserts, 1, `${half} updated + ${half} created per request`);

  await checkStored(stack.databaseUrl, suffix, RECORDS);
  return { records_per_scenario: RECORDS, batch_size: BATCH_SIZE, idle_cpu_ms_per_s: Math.round(idleMsPerS), rows };
}

/** What the answers said, counted in the database: every record written, every upsert match changed. */
async function checkStored(databaseUrl: string, suffix: string, records: number): Promise<void> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ prefix: string; n: string; upserted: string }>(
      `SELECT substring(email from '^[a-z]+') AS prefix, count(*) AS n, count(*) FILTER (WHERE first_name = 'Upserted') AS upserted
         FROM contacts.contacts WHERE email LIKE $1 GROUP BY 1`,
      [`%-${suffix}@batch.bench.example`],
    );
    const found = Object.fromEntries(rows.map((r) => [r.prefix, { n: Number(r.n), upserted: Number(r.upserted) }]));
    const expected: Record<string, { n: number; upserted: number }> = {
      single: { n: records, upserted: records / 2 },
      seq: { n: records, upserted: 0 },
      conc: { n: records, upserted: 0 },
      ups: { n: records / 2, upserted: 0 },
    };
    const wrong = Object.entries(expected).filter(([prefix, want]) => found[prefix]?.n !== want.n || found[prefix]?.upserted !== want.upserted);
    if (wrong.length)
      throw new Error(`batch writes: the database disagrees with the answers: expected ${JSON.stringify(expected)}, found ${JSON.stringify(found)}`);
  } finally {
    await pg.end();
  }
}

/** Busy milliseconds of the whole machine so far (user, nice, system, irq, softirq), as bench/cpu-breakdown.ts reads them. */
function machineBusyMs(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) * 10;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The Markdown table of a batch result. */
export function batchTable(result: BatchResult): string[] {
  return [
    '| Scenario | records | seconds | records/s | CPU ms/record | ratio vs singles |',
    '|---|---:|---:|---:|---:|---:|',
    ...result.rows.map(
      (r) =>
        `| ${r.scenario} | ${r.records} | ${r.seconds.toFixed(2)} | ${r.records_per_s} | ${r.cpu_ms_per_record.toFixed(2)} | ${r.ratio_vs_singles.toFixed(1)}x |`,
    ),
  ];
}
