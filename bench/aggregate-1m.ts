import { mkdirSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { performance } from 'perf_hooks';
import { Client } from 'pg';
import { machine, percentile, runBenchmark } from './bench-stack';
import { companyId, CONTACTS, DEALS, userId, withSeededStack } from './seed-1m';

/**
 * `POST /<object>/aggregate` (docs/aggregate.md) at scale, on the data set of `npm run bench:lists`
 * (BENCH_CONTACTS contacts, BENCH_DEALS deals): each scenario of issue 43 through the gateway with an API
 * key, beside the same question as one plain `GROUP BY` statement run straight on the stack's database
 * with one `pg` client, one request at a time, API and SQL alternating so both see the same machine. The
 * groups' counts of both must match (a difference is flagged and ends the run with exit code 1). Prints a
 * markdown table and `EXPLAIN (ANALYZE, BUFFERS)` of every statement; raw times go to bench/results/.
 * `npm run bench:aggregate`. Settings: BENCH_AGGREGATE_RUNS (50), BENCH_AGGREGATE_WARMUP (3),
 * BENCH_CONTACTS (1,000,000), BENCH_DEALS (200,000), QUERY_TIMEOUT_MS (10000 here: the whole-table scenario
 * is over the default 3 s budget on a shared 2-core machine).
 */
const ROOT = join(__dirname, '..', '..');
const RUNS = Number(process.env.BENCH_AGGREGATE_RUNS ?? 50);
const WARMUP = Number(process.env.BENCH_AGGREGATE_WARMUP ?? 3);
// The services read it from the environment the bench stack hands down.
const QUERY_TIMEOUT_MS = (process.env.QUERY_TIMEOUT_MS ??= '10000');

interface Scenario {
  label: string;
  /** The target for the route's p99, in ms. */
  target: number;
  object: string;
  body: Record<string, unknown>;
  /** The same question in SQL: rows of `key` (the groups' values joined with '|') and `n` (the count). */
  sql: { text: string; params: unknown[] };
}

const SCENARIOS: Scenario[] = [
  {
    label: 'contacts by stage and created_at month, whole table',
    target: 1000,
    object: 'contacts',
    body: { group_by: ['stage', { field: 'created_at', interval: 'month' }], metrics: { n: { op: 'count' } }, limit: 1000 },
    sql: {
      text: `SELECT concat_ws('|', stage, to_char(date_trunc('month', created_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM')) AS key, count(*) AS n
             FROM contacts.contacts GROUP BY stage, date_trunc('month', created_at, 'UTC')`,
      params: [],
    },
  },
  {
    label: 'contacts of one owner by source',
    target: 50,
    object: 'contacts',
    body: { filter: { owner_id: userId(7) }, group_by: ['source'], metrics: { n: { op: 'count' } } },
    sql: { text: `SELECT source AS key, count(*) AS n FROM contacts.contacts WHERE owner_id = $1 GROUP BY source`, params: [userId(7)] },
  },
  {
    label: 'contacts of one company by source',
    target: 50,
    object: 'contacts',
    body: { filter: { company_id: companyId(7) }, group_by: ['source'], metrics: { n: { op: 'count' } } },
    sql: { text: `SELECT source AS key, count(*) AS n FROM contacts.contacts WHERE company_id = $1 GROUP BY source`, params: [companyId(7)] },
  },
  {
    label: 'deals by stage.name, sum and p90 of value',
    target: 300,
    object: 'deals',
    body: {
      group_by: ['stage.name'],
      metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'value' }, p90: { op: 'percentile', field: 'value', percentile: 90 } },
    },
    // The route answers the totals over all groups beside the groups, and tests each group for values in more
    // than one currency (money is never added across currencies): the SQL asks the same question.
    sql: {
      text: `SELECT GROUPING(s.name) AS total, s.name AS key, count(*) AS n, sum(d.value), percentile_cont(0.9) WITHIN GROUP (ORDER BY d.value),
                    min(d.currency) FILTER (WHERE d.value IS NOT NULL) AS lowest_currency, max(d.currency) FILTER (WHERE d.value IS NOT NULL) AS highest_currency
             FROM deals.deals d LEFT JOIN deals.stages s ON s.id = d.stage_id GROUP BY GROUPING SETS ((s.name), ())`,
      params: [],
    },
  },
  {
    label: 'deals of one owner by company.name (across services)',
    target: 300,
    object: 'deals',
    body: { filter: { owner_id: userId(7) }, group_by: ['company.name'], metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'value' } }, limit: 1000 },
    sql: {
      text: `SELECT coalesce(c.name, '') AS key, count(*) AS n, sum(d.value)
             FROM deals.deals d LEFT JOIN contacts.companies c ON c.id = d.company_id WHERE d.owner_id = $1 GROUP BY c.name`,
      params: [userId(7)],
    },
  },
];

/** The groups of an aggregation's answer as `key → count`, keyed as the scenario's SQL keys them. */
function apiGroups(answer: { data: Array<{ group: Record<string, unknown>; metrics: { n: number } }> }): Map<string, number> {
  return new Map(
    answer.data.map((g) => [
      Object.values(g.group)
        .map((v) => (v === null ? '' : typeof v === 'string' && /^\d{4}-\d{2}-01T/.test(v) ? v.slice(0, 7) : String(v)))
        .join('|'),
      g.metrics.n,
    ]),
  );
}

const p = (values: number[], q: number) => Math.round(percentile(values, q) * 10) / 10;

runBenchmark(async () => {
  await withSeededStack(ROOT, async ({ stack, seedSeconds }) => {
    const pg = new Client({ connectionString: stack.databaseUrl });
    await pg.connect();
    // The route's transaction runs with this work_mem (AGGREGATE_SETTINGS in libs/records); the same SQL gets the same.
    await pg.query(`SET work_mem = '64MB'`);
    const lines: string[] = [];
    const raw: Record<string, { api: number[]; sql: number[] }> = {};
    let mismatch = false;
    try {
      process.stdout.write(`seeded ${CONTACTS} contacts and ${DEALS} deals in ${seedSeconds} s\n`);
      lines.push(
        `${machine()}, load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}, ${RUNS} runs after ${WARMUP} warm-up, QUERY_TIMEOUT_MS ${QUERY_TIMEOUT_MS}`,
      );
      lines.push(
        '',
        '| Scenario | target p99 | groups | API p50 ms | API p99 ms | SQL p50 ms | SQL p99 ms | p50 API/SQL | same groups |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      );
      const explains: string[] = [];
      for (const scenario of SCENARIOS) {
        const api: number[] = [];
        const sql: number[] = [];
        let answer: any;
        let rows: Array<{ key: string; n: string; total?: number }> = [];
        for (let i = 0; i < WARMUP + RUNS; i++) {
          let started = performance.now();
          const res = await fetch(`${stack.api}/${scenario.object}/aggregate`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Api-Key': stack.key },
            body: JSON.stringify(scenario.body),
          });
          answer = await res.json();
          if (res.status !== 200) throw new Error(`${scenario.label}: ${res.status} ${JSON.stringify(answer)}`);
          if (i >= WARMUP) api.push(performance.now() - started);
          started = performance.now();
          rows = (await pg.query(scenario.sql.text, scenario.sql.params)).rows;
          if (i >= WARMUP) sql.push(performance.now() - started);
        }
        const fromApi = apiGroups(answer);
        const fromSql = new Map(rows.filter((r) => !r.total).map((r) => [r.key ?? '', Number(r.n)]));
        const same = fromApi.size === fromSql.size && [...fromSql].every(([key, n]) => fromApi.get(key) === n);
        mismatch ||= !same;
        raw[scenario.label] = { api, sql };
        const ratio = (percentile(api, 50) / percentile(sql, 50)).toFixed(1);
        lines.push(
          `| ${scenario.label} | ${scenario.target} | ${fromApi.size} | ${p(api, 50)} | ${p(api, 99)}${p(api, 99) > scenario.target ? ' ⚠' : ''} | ${p(sql, 50)} | ${p(sql, 99)} | ${ratio}x | ${same ? 'same' : 'DIFFERENT'} |`,
        );
        const plan = await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${scenario.sql.text}`, scenario.sql.params);
        explains.push(`### ${scenario.label}\n${JSON.stringify(scenario.body)}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
      }
      process.stdout.write(`${lines.join('\n')}\n\n${explains.join('\n\n')}\n`);
      mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
      writeFileSync(join(ROOT, 'bench', 'results', `aggregate-${Date.now()}.json`), JSON.stringify(raw));
    } finally {
      await pg.end();
    }
    if (mismatch) process.exitCode = 1;
  });
});
