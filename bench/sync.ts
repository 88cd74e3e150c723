import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { BenchStack, buildRef, machine, ROOT, runBenchmark, startBenchStack, thisBuild } from './bench-stack';
import { knobs } from './knobs';

/**
 * A sync against the event path, this build beside an earlier commit in one run (`npm run bench:sync --
 * <git ref>`, default HEAD~1): BENCH_SYNC_CONTACTS new contacts (100,000 unless told) written as
 * `POST /contacts/batch` creates of 200, 4 requests at a time, on a full stack. It reports how fast the
 * sync was acknowledged, how far the log (the events service's table) and webhook intake were behind
 * the last acknowledged write when they held every contact.created of the sync, and the age of the
 * oldest outbox row of contacts sampled every 100 ms while the sync ran (its created_at is the start of
 * the transaction that wrote it, as `crm_outbox_oldest_age_seconds` reports it). The builds run one after
 * the other, each on a stack of its own started just before.
 */
const {
  SYNC_CONTACTS: CONTACTS,
  SYNC_BATCH: BATCH,
  SYNC_CONCURRENCY: CONCURRENCY,
} = knobs('BENCH_', { SYNC_CONTACTS: 100_000, SYNC_BATCH: 200, SYNC_CONCURRENCY: 4 });
const SAMPLE_MS = 100;
const CATCH_UP_DEADLINE_MS = 600_000;

interface SyncResult {
  build: string;
  acknowledged_s: number;
  records_per_s: number;
  /** Seconds after the last acknowledged write until the log held every event of the sync. */
  log_behind_s: number;
  /** The same for webhook intake. */
  intake_behind_s: number;
  oldest_outbox_max_s: number;
  oldest_outbox_p99_s: number;
  outbox_rows_max: number;
}

async function sync(stack: BenchStack, build: string): Promise<SyncResult> {
  const db = new Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const tag = randomBytes(4).toString('hex');
  const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
  const ages: number[] = [];
  let rowsMax = 0;
  let sampling = true;
  const sampler = (async () => {
    const probe = new Client({ connectionString: stack.databaseUrl });
    await probe.connect();
    try {
      while (sampling) {
        const { rows } = await probe.query<{ age: number; rows: number }>(
          `SELECT coalesce(extract(epoch FROM clock_timestamp() - min(created_at)), 0)::float8 AS age, count(*)::int AS rows FROM contacts.outbox`,
        );
        ages.push(rows[0].age);
        rowsMax = Math.max(rowsMax, rows[0].rows);
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
      }
    } finally {
      await probe.end();
    }
  })();
  const logged = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE type = 'contact.created'`)).rows[0].n;
  const [logBefore, intakeBefore] = [await logged('events.events'), await logged('webhooks.webhook_events')];
  const batches = Math.ceil(CONTACTS / BATCH);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let b = next++; b < batches; b = next++) {
      const items = Array.from({ length: Math.min(BATCH, CONTACTS - b * BATCH) }, (_, i) => ({
        email: `s${b}-${i}-${tag}@sync.bench.example`,
        first_name: 'Sync',
      }));
      const res = await fetch(`${stack.api}/contacts/batch`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ operation: 'create', all_or_none: true, items }),
      });
      if (res.status !== 200) throw new Error(`POST /contacts/batch: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer();
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const acknowledged = performance.now();
    // Caught up: each table holds every contact.created of the sync, timed from the last acknowledgement.
    const behind: Record<string, number> = {};
    const want: Record<string, number> = { 'events.events': logBefore + CONTACTS, 'webhooks.webhook_events': intakeBefore + CONTACTS };
    while (Object.keys(behind).length < 2) {
      for (const table of Object.keys(want)) {
        if (behind[table] === undefined && (await logged(table)) >= want[table]) behind[table] = (performance.now() - acknowledged) / 1000;
      }
      if (performance.now() - acknowledged > CATCH_UP_DEADLINE_MS) throw new Error(`not caught up: ${JSON.stringify(behind)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    sampling = false;
    await sampler;
    const sorted = [...ages].sort((a, b) => a - b);
    const seconds = (acknowledged - started) / 1000;
    return {
      build,
      acknowledged_s: Math.round(seconds * 100) / 100,
      records_per_s: Math.round(CONTACTS / seconds),
      log_behind_s: Math.round(behind['events.events'] * 100) / 100,
      intake_behind_s: Math.round(behind['webhooks.webhook_events'] * 100) / 100,
      oldest_outbox_max_s: Math.round(sorted[sorted.length - 1] * 100) / 100,
      oldest_outbox_p99_s: Math.round(sorted[Math.floor(sorted.length * 0.99)] * 100) / 100,
      outbox_rows_max: rowsMax,
    };
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    await db.end();
  }
}

async function main(): Promise<void> {
  const base = buildRef(process.argv[2] ?? 'HEAD~1');
  const results: SyncResult[] = [];
  try {
    for (const [name, root] of [
      [`base ${base.commit}`, base.dir],
      [`this ${thisBuild()}`, ROOT],
    ]) {
      const stack = await startBenchStack(root);
      try {
        const result = await sync(stack, name);
        process.stderr.write(`${JSON.stringify(result)}\n`);
        results.push(result);
      } finally {
        await stack.stop();
      }
    }
  } finally {
    base.remove();
  }
  const lines = [
    `sync of ${CONTACTS} contacts, batches of ${BATCH}, ${CONCURRENCY} at a time, ${new Date().toISOString()}, ${machine()}`,
    '',
    '| build | acknowledged in s | records/s | log behind s | intake behind s | oldest outbox row max s (p99) | outbox rows max |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.build} | ${r.acknowledged_s} | ${r.records_per_s} | ${r.log_behind_s} | ${r.intake_behind_s} | ${r.oldest_outbox_max_s} (${r.oldest_outbox_p99_s}) | ${r.outbox_rows_max} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
