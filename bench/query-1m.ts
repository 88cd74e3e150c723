import { mkdirSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { BenchStack, machine, percentile, runBenchmark } from './bench-stack';
import { customValueCalls } from './custom-value-calls';
import { cases, QueryCase, Rows, Schema, Statement } from './query-1m.cases';
import { CONTACTS, DEALS, withSeededStack } from './seed-1m';

/**
 * `POST /<object>/query` (docs/query.md) at scale, on the data set of `npm run bench:lists`: twenty-four queries
 * through the gateway with an API key, each beside the statement the query compiler
 * (libs/records/src/query/filter-compiler.ts and query-runner.ts) produces for it, written out by hand and run straight on the
 * stack's database with `pg`. Each pair is timed one request at a time, API and SQL alternating, so both
 * see the same machine. The page's ids of both must match: a difference is flagged in the table and ends
 * the run with exit code 1, and any answer but a 200 fails it, except a 400 where a case expects one (a path
 * not served yet, a query past its budget). Prints one markdown table, the bodies, and
 * `EXPLAIN (ANALYZE, BUFFERS)` of every query whose API p99 is over 50 ms or that asks for it (the date-time
 * ranges); raw times go to bench/results/.
 * `npm run bench:query`.
 * Settings: BENCH_QUERY_RUNS (200), BENCH_QUERY_WARMUP (10), BENCH_QUERY_BUDGET_S (40: a query whose runs
 * would take longer gets fewer, at least 10), QUERY_TIMEOUT_MS (3000, the services' statement budget, also
 * applied to the direct SQL), BENCH_CONTACTS, BENCH_DEALS, BENCH_QUERY_CASES (comma-separated: a case's number
 * in the full list, or text its label contains, case-insensitive, e.g. `renews_at,created_at in one month`;
 * only those are timed, under their numbers in the full list).
 */
const ROOT = join(__dirname, '..', '..');
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 200);
const WARMUP = Number(process.env.BENCH_QUERY_WARMUP ?? 10);
const BUDGET_MS = Number(process.env.BENCH_QUERY_BUDGET_S ?? 40) * 1000;
const MIN_RUNS = 10;
const QUERY_TIMEOUT_MS = Number(process.env.QUERY_TIMEOUT_MS ?? 3000);
const SLOW_P99_MS = 50;
const EXPLAIN_LIMIT_MS = 30_000;
const PAGE_SIZE = 50;
const ONLY = (process.env.BENCH_QUERY_CASES ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);

/** The cases to time, each with its number in the full list. */
function selectedCases(): Array<{ q: QueryCase; n: number }> {
  const all = cases().map((q, i) => ({ q, n: i + 1 }));
  if (!ONLY.length) return all;
  const chosen = all.filter(({ q, n }) => ONLY.some((item) => (/^\d+$/.test(item) ? Number(item) === n : q.label.toLowerCase().includes(item))));
  if (!chosen.length) throw new Error(`BENCH_QUERY_CASES=${process.env.BENCH_QUERY_CASES} names no case`);
  return chosen;
}

interface Side {
  times: number[];
  /** How each run was answered: `200`, `400 query_too_expensive`, `timeout` … and how often. */
  answers: Map<string, number>;
  ids?: string[];
  hasMore?: boolean;
}

interface Measured {
  query: QueryCase;
  /** The case's number in the full list. */
  n: number;
  runs: number;
  api?: Side;
  /** Why the API side was not timed. */
  apiNote?: string;
  sql: Side;
  idsMatch?: boolean;
  plan?: string;
}

interface ApiAnswer {
  status: number;
  /** `200`, or the status and error code. */
  answer: string;
  ids?: string[];
  hasMore?: boolean;
  nextCursor?: string;
}

async function callApi(api: string, key: string, object: string, body: Record<string, unknown>): Promise<ApiAnswer> {
  const res = await fetch(`${api}/${object}/query`, {
    method: 'POST',
    headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = JSON.parse(text) as { data?: Array<{ id: string }>; has_more?: boolean; next_cursor?: string; error?: { code: string; message: string } };
  if (res.status === 200) return { status: 200, answer: '200', ids: json.data!.map((item) => item.id), hasMore: json.has_more, nextCursor: json.next_cursor };
  return { status: res.status, answer: `${res.status} ${json.error?.code ?? text.slice(0, 80)}` };
}

interface SqlAnswer {
  answer: string;
  ids?: string[];
  rows?: Rows;
}

async function callSql(pg: Client, statement: Statement): Promise<SqlAnswer> {
  try {
    const result = await pg.query(statement.text, statement.params);
    return { answer: 'ok', ids: result.rows.map((row: { id: string }) => row.id), rows: result.rows };
  } catch (err) {
    if ((err as { code?: string }).code === '57014') return { answer: 'timeout' };
    throw err;
  }
}

const count = (answers: Map<string, number>, answer: string) => answers.set(answer, (answers.get(answer) ?? 0) + 1);
const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
};

/** The body and statement of the page to time: the first, or the one after walking `page.number - 1` pages on each side. */
async function pageToTime(
  q: QueryCase,
  api: (body: Record<string, unknown>) => Promise<ApiAnswer>,
  pg: Client,
): Promise<{ body: Record<string, unknown>; sql: Statement }> {
  if (!q.page) return { body: q.body, sql: q.sql };
  let body = q.body;
  let sql = q.sql;
  for (let i = 1; i < q.page.number; i++) {
    const page = await api(body);
    if (!page.nextCursor) throw new Error(`${q.label}: the API has no page ${i + 1} (${page.answer})`);
    body = { ...q.body, cursor: page.nextCursor };
    const rows = (await callSql(pg, sql)).rows ?? [];
    if (rows.length <= PAGE_SIZE) throw new Error(`${q.label}: the direct SQL has no page ${i + 1}`);
    const last = rows[PAGE_SIZE - 1];
    sql = q.page.after(String(last['~k0']), String(last.id));
  }
  return { body, sql };
}

type Clients = Record<Schema, Client>;
type Executed = Array<{ schema: Schema; sql: Statement }>;

/** The query's statements straight on the database, in the order the services run them; the answer is the page statement's. */
async function runDirect(clients: Clients, q: QueryCase, sql: Statement): Promise<{ answer: SqlAnswer; executed: Executed }> {
  const executed: Executed = [];
  let page = sql;
  if (q.prelude) {
    const previous: Rows[] = [];
    for (const step of q.prelude.steps) {
      const statement = step.sql(previous);
      executed.push({ schema: step.schema, sql: statement });
      const answer = await callSql(clients[step.schema], statement);
      if (!answer.rows) return { answer, executed };
      previous.push(answer.rows);
    }
    page = { text: sql.text, params: q.prelude.bind(previous) };
  }
  executed.push({ schema: q.schema, sql: page });
  return { answer: await callSql(clients[q.schema], page), executed };
}

async function measure(q: QueryCase, n: number, stack: BenchStack, clients: Clients): Promise<Measured> {
  const api = (body: Record<string, unknown>) => callApi(stack.api, stack.key, q.object, body);
  const { body, sql } = await pageToTime(q, api, clients[q.schema]);
  const limit = Number(body.limit ?? PAGE_SIZE);
  const direct = () => runDirect(clients, q, sql);

  // An API that refuses the path is reported as not supported yet; the SQL is still timed, as the floor.
  const first = await api(body);
  const unsupported = q.unsupportedYet && first.status === 400 ? `not supported yet (${first.answer})` : undefined;
  const runApi = !unsupported;

  const warmStarted = performance.now();
  const warm: number[] = [];
  for (let i = 0; i < WARMUP && (i === 0 || performance.now() - warmStarted < 5000); i++) {
    const a = runApi ? (await timed(() => api(body)))[1] : 0;
    const s = (await timed(direct))[1];
    warm.push(a + s);
  }
  const runs = Math.max(MIN_RUNS, Math.min(RUNS, Math.floor(BUDGET_MS / percentile(warm, 50))));

  const apiSide: Side = { times: [], answers: new Map() };
  const sqlSide: Side = { times: [], answers: new Map() };
  let executed: Executed = [];
  const one = {
    api: async () => {
      const [answer, ms] = await timed(() => api(body));
      apiSide.times.push(ms);
      count(apiSide.answers, answer.answer);
      if (answer.status === 200) [apiSide.ids, apiSide.hasMore] = [answer.ids, answer.hasMore];
      else if (!(q.mayTimeOut && answer.answer === '400 query_too_expensive')) throw new Error(`${q.label}: POST /${q.object}/query answered ${answer.answer}`);
    },
    sql: async () => {
      const [{ answer, executed: statements }, ms] = await timed(direct);
      sqlSide.times.push(ms);
      count(sqlSide.answers, answer.answer);
      executed = statements;
      if (answer.ids) [sqlSide.ids, sqlSide.hasMore] = [answer.ids.slice(0, limit), answer.ids.length > limit];
    },
  };
  for (let i = 0; i < runs; i++) {
    // Alternate which side goes first, so neither always follows the other's cache effects.
    if (!runApi) await one.sql();
    else if (i % 2 === 0) await one.api().then(one.sql);
    else await one.sql().then(one.api);
  }
  const measured: Measured = { query: q, n, runs, sql: sqlSide, ...(runApi ? { api: apiSide } : { apiNote: unsupported }) };
  if (runApi && apiSide.ids && sqlSide.ids) measured.idsMatch = apiSide.ids.join() === sqlSide.ids.join() && apiSide.hasMore === sqlSide.hasMore;
  const p99 = runApi ? percentile(apiSide.times, 99) : percentile(sqlSide.times, 99);
  if (p99 > SLOW_P99_MS || q.explain) {
    const plans: string[] = [];
    for (const [i, step] of executed.entries()) {
      const plan = await explain(clients[step.schema], step.sql);
      plans.push(
        executed.length > 1
          ? `-- statement ${i + 1} of ${executed.length}, ${step.schema} service: ${step.sql.text.slice(0, 160)}${step.sql.text.length > 160 ? ' …' : ''}\n${plan}`
          : plan,
      );
    }
    measured.plan = plans.join('\n\n');
  }
  return measured;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement; one that runs past the budget is analysed once more with a longer limit. */
async function explain(pg: Client, sql: Statement): Promise<string> {
  const run = async () =>
    (await pg.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql.text}`, sql.params)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  try {
    return await run();
  } catch (err) {
    if ((err as { code?: string }).code !== '57014') throw err;
  }
  await pg.query(`SET statement_timeout = ${EXPLAIN_LIMIT_MS}`);
  try {
    return `-- ran past the ${QUERY_TIMEOUT_MS} ms budget; analysed with a ${EXPLAIN_LIMIT_MS} ms limit instead\n${await run()}`;
  } catch (err) {
    if ((err as { code?: string }).code !== '57014') throw err;
    const plan = (await pg.query(`EXPLAIN ${sql.text}`, sql.params)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    return `-- ran past ${EXPLAIN_LIMIT_MS} ms even to be analysed; the plan alone\n${plan}`;
  } finally {
    await pg.query(`SET statement_timeout = ${QUERY_TIMEOUT_MS}`);
  }
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}x`;
const answers = (side: Side) =>
  [...side.answers].map(([answer, n]) => `${answer === 'ok' ? 'answered' : answer === 'timeout' ? 'timed out' : answer} ×${n}`).join(', ');

/** Items on the page when every run of both sides answered; otherwise how each side answered. */
function describeAnswer(m: Measured): string {
  const sqlAnswered = m.sql.answers.size === 1 && m.sql.answers.has('ok');
  if (!m.api) return `${m.apiNote}; SQL ${sqlAnswered ? `${m.sql.ids!.length}${m.sql.hasMore ? ' (more)' : ''}` : answers(m.sql)}`;
  const a = m.api;
  if (a.ids && a.answers.size === 1 && sqlAnswered) return `${a.ids.length}${a.hasMore ? ' (more)' : ''}`;
  return `API ${answers(a)}; SQL ${answers(m.sql)}`;
}

function row(m: Measured): string {
  const n = m.n;
  const sql = { p50: percentile(m.sql.times, 50), p99: percentile(m.sql.times, 99) };
  const ids = m.idsMatch === undefined ? '—' : m.idsMatch ? 'same' : '**differ**';
  if (!m.api) return `| ${n} | ${m.query.label} | ${describeAnswer(m)} | ${m.runs} | — | — | ${ms(sql.p50)} | ${ms(sql.p99)} | — | — | ${ids} |`;
  const api = { p50: percentile(m.api.times, 50), p99: percentile(m.api.times, 99) };
  const flag = api.p99 > SLOW_P99_MS ? ' ⚠' : '';
  return `| ${n} | ${m.query.label} | ${describeAnswer(m)} | ${m.runs} | ${ms(api.p50)} | ${ms(api.p99)}${flag} | ${ms(sql.p50)} | ${ms(sql.p99)} | ${ratio(api.p50, sql.p50)} | ${ratio(api.p99, sql.p99)} | ${ids} |`;
}

/** A body as printed: long `$in` lists shortened. */
function shown(body: Record<string, unknown>): string {
  return JSON.stringify(body, (key, value) =>
    key === '$in' && Array.isArray(value) && value.length > 3 ? [...value.slice(0, 2), `… ${value.length} values`] : value,
  );
}

async function connect(databaseUrl: string, schema: Schema): Promise<Client> {
  // The services' own connection settings (libs/common database.ts), so unqualified names resolve alike,
  // and the statement budget the services set for a query.
  const pg = new Client({ connectionString: databaseUrl, options: `-c search_path=${schema},public -c statement_timeout=${QUERY_TIMEOUT_MS}` });
  await pg.connect();
  return pg;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0];
  await withSeededStack(ROOT, async (seeded) => {
    const { stack, seedSeconds } = seeded;
    const clients = { contacts: await connect(stack.databaseUrl, 'contacts'), deals: await connect(stack.databaseUrl, 'deals') };
    const results: Measured[] = [];
    const started = Date.now();
    let calls: string[] = [];
    try {
      for (const { q, n } of selectedCases()) {
        const m = await measure(q, n, stack, clients);
        results.push(m);
        const api = m.api ? `API p50 ${ms(percentile(m.api.times, 50))} ms` : m.apiNote;
        process.stderr.write(`bench: ${n}. ${q.label}: ${m.runs} runs, ${api}, SQL p50 ${ms(percentile(m.sql.times, 50))} ms\n`);
      }
      // With a custom date-time case among them, what one call of custom_instant costs, in the same run.
      const renews = results.filter((m) => m.query.label.includes('renews_at'));
      if (renews.length) calls = await customValueCalls(clients.contacts, renews.find((m) => !m.query.body.sort)?.query.sql);
    } finally {
      await Promise.all(Object.values(clients).map((c) => c.end()));
    }
    const mismatches = results.filter((m) => m.idsMatch === false);
    const slow = results.filter((m) => m.plan);
    const lines = [
      `Run ${new Date().toISOString()} on ${machine()}; load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end. ` +
        `${CONTACTS} contacts, 20000 companies, ${DEALS} deals, 100000 activities and tasks seeded in ${seedSeconds} s; the queries took ${Math.round((Date.now() - started) / 1000)} s. ` +
        `QUERY_TIMEOUT_MS ${QUERY_TIMEOUT_MS} (the direct SQL runs under the same statement_timeout). Each query: up to ${RUNS} timed runs after up to ${WARMUP} warm-up runs ` +
        `(fewer when the runs would take over ${BUDGET_MS / 1000} s, at least ${MIN_RUNS}; under 100 runs, p99 is the slowest run), one request at a time, API and direct SQL alternating. ` +
        `API: \`POST /<object>/query\` through the gateway with an API key, client to answer parsed. SQL: the statements the compiler produces for the body, written out, ` +
        `with \`pg\` on the stack's database under the service's search_path, one round trip each (the service wraps each in BEGIN, SET LOCAL statement_timeout and COMMIT); ` +
        `a path across services is the three statements the two services run. ` +
        `Answer: items on the page ("more": has_more). Ids: the page's ids from the API and the SQL.`,
      '',
      '| # | Query | answer | runs | API p50 ms | API p99 ms | SQL p50 ms | SQL p99 ms | p50 API/SQL | p99 API/SQL | ids |',
      '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...results.map(row),
      '',
      ...calls,
      'Bodies:',
      '',
      ...results.map((m) => `${m.n}. \`POST /${m.query.object}/query\` \`${shown(m.query.body)}\``),
      '',
      mismatches.length
        ? `Ids differ between the API and the direct SQL for: ${mismatches.map((m) => m.n).join(', ')}.`
        : 'The API and the direct SQL returned the same ids for every query both answered.',
      '',
      ...(slow.length ? [`Plans of the direct SQL of every query over ${SLOW_P99_MS} ms at p99, and of the date-time ranges:`, ''] : []),
      ...slow.flatMap((m) => [
        `${m.n}. ${m.query.label}${m.query.page ? ` (the statement of page ${m.query.page.number})` : ''}`,
        '',
        '```',
        m.plan!,
        '```',
        '',
      ]),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);

    const stamp = new Date().toISOString();
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(ROOT, 'bench', 'results', `query-${stamp.replace(/[:.]/g, '-')}.json`),
      JSON.stringify(
        {
          stamp,
          machine: machine(),
          contacts: CONTACTS,
          deals: DEALS,
          queryTimeoutMs: QUERY_TIMEOUT_MS,
          queries: results.map((m) => ({
            n: m.n,
            label: m.query.label,
            object: m.query.object,
            body: m.query.body,
            sql: m.query.sql.text,
            runs: m.runs,
            api: m.api && {
              answers: Object.fromEntries(m.api.answers),
              p50: percentile(m.api.times, 50),
              p99: percentile(m.api.times, 99),
              times: m.api.times,
            },
            api_note: m.apiNote,
            direct: { answers: Object.fromEntries(m.sql.answers), p50: percentile(m.sql.times, 50), p99: percentile(m.sql.times, 99), times: m.sql.times },
            ids_match: m.idsMatch,
            plan: m.plan,
          })),
        },
        null,
        2,
      ),
    );
    if (mismatches.length) process.exitCode = 1;
  });
}

runBenchmark(main);
