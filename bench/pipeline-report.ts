import { loadavg } from 'os';
import { join } from 'path';
import { Client } from 'pg';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the bench times the service's own statements beside the route
import * as report from '../apps/deals/src/pipelines/pipeline-report.sql';
import { KEPT_DATABASE, machine, percentile, runBenchmark, SEEDED_DEALS_ENV, withBenchStack } from './bench-stack';

/**
 * `npm run bench:pipeline-report`: GET /pipelines/:id/report (docs/pipeline-report.md) of one pipeline
 * holding BENCH_REPORT_DEALS deals (200,000) with about five stage-history rows each (1,000,000), beside the
 * same statements (apps/deals/src/pipelines/pipeline-report.sql.ts) run on one `pg` client in one
 * REPEATABLE READ transaction, as the service runs them. API and SQL alternate, one request at a time, so
 * both see the same machine. Deals and history are written straight into the stack's database (a deal
 * reaches 1 to 9 history rows through the open stages, a third end won, a third lost). Prints a markdown
 * table and EXPLAIN (ANALYZE, BUFFERS) of each statement.
 * Settings: BENCH_REPORT_DEALS (200000), BENCH_REPORT_RUNS (50), BENCH_REPORT_WARMUP (5); BENCH_DATABASE=<name> keeps the
 * seeded database (crm_bench_<name>) and reuses it on the next run (drop it when done).
 */
const ROOT = join(__dirname, '..', '..');
const DEALS = Number(process.env.BENCH_REPORT_DEALS ?? 200_000);
const RUNS = Number(process.env.BENCH_REPORT_RUNS ?? 50);
const WARMUP = Number(process.env.BENCH_REPORT_WARMUP ?? 5);
const TIME_ZONE = 'Europe/Berlin';
const DAY_MS = 86_400_000;

/** Deals of one pipeline and their stage history, as the service would have written them over 200 days. */
async function seed(db: Client, pipelineId: string, stageIds: string[]): Promise<{ deals: number; history: number }> {
  await db.query(`ALTER TABLE deals DISABLE TRIGGER deals_closed_at`);
  await db.query(
    `CREATE TEMP TABLE seed AS
     SELECT g, k, step, fate, clock_timestamp() - interval '1 day' * ((g * 104729) % 200) - interval '1 day' * step * (k - 1) AS created,
            CASE WHEN k = 1 OR fate = 2 THEN ($2::text[])[1 + (k - 1) % 4] WHEN fate = 0 THEN ($2::text[])[5] ELSE ($2::text[])[6] END AS final_stage,
            CASE WHEN k = 1 OR fate = 2 THEN 'open' WHEN fate = 0 THEN 'won' ELSE 'lost' END AS status
     FROM (SELECT g, 1 + (g * 31) % 9 AS k, 0.5 + ((g * 7919) % 100) / 10.0 AS step, g % 3 AS fate FROM generate_series(1, $1::bigint) AS g) AS s`,
    [DEALS, stageIds],
  );
  await db.query(
    `INSERT INTO deals (id, name, pipeline_id, stage_id, value, currency, status, expected_close, stage_entered_at, created_at, updated_at, closed_at)
     SELECT 'deal_' || lpad(to_hex(g), 26, '0'), 'Deal ' || g, $1, final_stage, (g * 7793) % 1000000, 'USD', status,
            CASE WHEN status = 'open' AND g % 2 = 0 THEN clock_timestamp() + interval '1 day' * ((g * 13) % 180) END,
            created + interval '1 day' * step * (k - 1), created, created + interval '1 day' * step * (k - 1),
            CASE WHEN status <> 'open' THEN created + interval '1 day' * step * (k - 1) END
     FROM seed`,
    [pipelineId],
  );
  await db.query(
    `INSERT INTO stage_history (id, deal_id, from_stage_id, to_stage_id, changed_at, changed_by, stay_started_at)
     SELECT 'sth_' || lpad(to_hex(g), 24, '0') || j, 'deal_' || lpad(to_hex(g), 26, '0'),
            CASE WHEN j > 0 THEN ($1::text[])[1 + (j - 1) % 4] END,
            CASE WHEN j < k - 1 THEN ($1::text[])[1 + j % 4] ELSE final_stage END,
            created + interval '1 day' * step * j, 'user_00000000000000000000000000',
            CASE WHEN j > 0 THEN created + interval '1 day' * step * (j - 1) END
     FROM seed, generate_series(0, k - 1) AS j`,
    [stageIds],
  );
  await db.query(`ALTER TABLE deals ENABLE TRIGGER deals_closed_at`);
  await db.query(`VACUUM ANALYZE deals`);
  await db.query(`VACUUM ANALYZE stage_history`);
  return counts(db);
}

async function counts(db: Client): Promise<{ deals: number; history: number }> {
  const [{ deals, history }] = (await db.query(`SELECT (SELECT count(*) FROM deals)::int AS deals, (SELECT count(*) FROM stage_history)::int AS history`)).rows;
  return { deals, history };
}

/** What the service runs for one report, in its order, on one connection. */
async function reportSql(db: Client, input: report.ReportInput, list = statements): Promise<void> {
  await db.query(`SELECT now() AT TIME ZONE $1`, [input.timeZone]);
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  await db.query(report.REPORT_SETTINGS);
  await db.query(`SELECT EXISTS (SELECT 1 FROM pipelines WHERE id = $1)`, [input.pipelineId]);
  await db.query(`SELECT * FROM stages WHERE pipeline_id = $1 ORDER BY position`, [input.pipelineId]);
  for (const s of list(input)) await db.query(s.text, s.params);
  await db.query('COMMIT');
}

/**
 * Days in stage as the build before stay_days ran it (each stay's length computed per row from its two
 * instants, migration 1765500000100), timed beside the current statements on the same data.
 */
function daysInStageBefore(input: report.ReportInput): report.Statement {
  return {
    text: `SELECT x.from_stage_id AS stage_id,
                  percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM x.changed_at - x.stay_started_at)::float8 / 86400) AS days
           FROM stage_history x
           WHERE x.from_stage_id = ANY($1::text[]) AND x.changed_at >= $2 AND x.changed_at < $3 AND x.stay_started_at IS NOT NULL
           GROUP BY 1`,
    params: [input.stages.map((s) => s.id), input.window.from, input.window.to],
  };
}

const before = (input: report.ReportInput): Array<report.Statement & { label: string }> =>
  statements(input).map((s) => (s.label === 'days in stage' ? { label: 'days in stage (before)', ...daysInStageBefore(input) } : s));

const statements = (input: report.ReportInput): Array<report.Statement & { label: string }> => [
  { label: 'open by stage', ...report.openByStage(input.pipelineId) },
  { label: 'currencies held', ...report.currencyRange(input.pipelineId) },
  { label: 'won/lost in window', ...report.closedInWindow(input) },
  { label: 'forecast by month', ...report.forecastByMonth(input) },
  { label: 'entered/advanced', ...report.enteredAndAdvanced(input) },
  { label: 'days in stage', ...report.daysInStage(input) },
];

async function main(): Promise<void> {
  await withBenchStack(
    ROOT,
    async (stack) => {
      // BENCH_DATABASE keeps the database (bench/bench-stack.ts): a pipeline seeded by an earlier run is reused.
      const existing = KEPT_DATABASE
        ? ((await (await fetch(`${stack.api}/pipelines?limit=1`, { headers: { 'X-Api-Key': stack.key } })).json()) as { data: any[] }).data[0]
        : undefined;
      const pipeline =
        existing ??
        (await stack.post('/pipelines', {
          name: 'Bench',
          stages: ['Lead', 'Qualified', 'Proposal', 'Negotiation']
            .map((name) => ({ name, type: 'open' }))
            .concat([
              { name: 'Won', type: 'won' },
              { name: 'Lost', type: 'lost' },
            ]),
        }));
      const stageIds: string[] = pipeline.stages.map((s: { id: string }) => s.id);
      const db = new Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        await db.query(`SET search_path TO deals`);
        process.stderr.write(`seeding ${DEALS} deals\n`);
        const seeded = existing ? await counts(db) : await seed(db, pipeline.id, stageIds);
        process.stderr.write(`seeded ${seeded.deals} deals, ${seeded.history} history rows\n`);
        // A kept database may just have been migrated, or its deals marked by an earlier run's stale sweep (rows
        // rewritten): index-only scans need the visibility map back.
        if (existing) for (const table of ['deals', 'stage_history']) await db.query(`VACUUM ANALYZE ${table}`);
        // The index the statements before stay_days read, so they are timed as they ran (dropped at the end).
        await db.query(
          `CREATE INDEX IF NOT EXISTS bench_stage_history_from_stage_before ON stage_history (from_stage_id, changed_at) INCLUDE (stay_started_at) WHERE from_stage_id IS NOT NULL`,
        );

        const url = `${stack.api}/pipelines/${pipeline.id}/report?time_zone=${encodeURIComponent(TIME_ZONE)}`;
        const api = async (): Promise<{ from: string; to: string }> => {
          const res = await fetch(url, { headers: { 'X-Api-Key': stack.key } });
          if (res.status !== 200) throw new Error(`report: ${res.status} ${await res.text()}`);
          return ((await res.json()) as { data: { from: string; to: string } }).data;
        };
        const first = await api();
        const probabilities = pipeline.stages.map((s: { probability: number }) => s.probability);
        const input = (): report.ReportInput => {
          const to = new Date();
          return {
            pipelineId: pipeline.id,
            window: { from: new Date(to.getTime() - 90 * DAY_MS), to },
            timeZone: TIME_ZONE,
            currency: null,
            stages: pipeline.stages.map((s: { id: string; type: string; position: number }, i: number) => ({ ...s, probability: probabilities[i] })),
          };
        };
        const times = { api: [] as number[], sql: [] as number[], before: [] as number[] };
        const loadBefore = loadavg()[0];
        for (let i = 0; i < WARMUP + RUNS; i++) {
          let started = performance.now();
          await api();
          if (i >= WARMUP) times.api.push(performance.now() - started);
          started = performance.now();
          await reportSql(db, input());
          if (i >= WARMUP) times.sql.push(performance.now() - started);
          started = performance.now();
          await reportSql(db, input(), before);
          if (i >= WARMUP) times.before.push(performance.now() - started);
        }
        const loadAfter = loadavg()[0];
        const plans: string[] = [];
        for (const s of [...statements(input()), ...before(input()).filter((b) => b.label.endsWith('(before)'))]) {
          await db.query('BEGIN');
          await db.query(report.REPORT_SETTINGS);
          const plan = (await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${s.text}`, s.params)).rows.map((r: Record<string, string>) => r['QUERY PLAN']);
          await db.query('COMMIT');
          plans.push(`-- ${s.label}\n${plan.join('\n')}`);
        }
        const row = (label: string, t: number[]) => `| ${label} | ${percentile(t, 50).toFixed(1)} | ${percentile(t, 99).toFixed(1)} |`;
        const p50Ratio = percentile(times.api, 50) / percentile(times.sql, 50);
        process.stdout.write(
          [
            `Run ${new Date().toISOString()} on ${machine()}; one pipeline of ${seeded.deals} deals, ${seeded.history} stage-history rows; window ${first.from} to ${first.to}, time_zone ${TIME_ZONE}; ${RUNS} runs each after ${WARMUP} warm-up, API and SQL alternating; load average ${loadBefore.toFixed(1)} at the start, ${loadAfter.toFixed(1)} at the end.`,
            '',
            '| Scenario | p50 ms | p99 ms |',
            '|---|---:|---:|',
            row('GET /pipelines/:id/report', times.api),
            row('the same statements on one pg client', times.sql),
            row('the statements before stay_days on one pg client', times.before),
            '',
            `API / SQL at p50: ${p50Ratio.toFixed(2)}×`,
            '',
            plans.join('\n\n'),
            '',
          ].join('\n'),
        );
      } finally {
        await db.query(`DROP INDEX IF EXISTS bench_stage_history_from_stage_before`).catch(() => undefined);
        await db.end();
      }
    },
    // A report past the default 5 s deadline would answer 503; the bench measures how long it takes.
    { apps: ['contacts', 'deals', 'gateway'], env: { RPC_TIMEOUT_MS: process.env.RPC_TIMEOUT_MS ?? '60000', ...SEEDED_DEALS_ENV } },
  );
}

runBenchmark(main);
