import { mkdirSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { BenchStack, machine, percentile, runBenchmark } from './bench-stack';
import { companyId, CONTACTS, DEALS, withSeededStack } from './seed-1m';

/**
 * `POST /<object>/query` (docs/query.md) at scale, on the data set of `npm run bench:lists`: twenty queries
 * through the gateway with an API key, each beside the statement the query compiler
 * (libs/runtime/src/query/filter-compiler.ts and query-runner.ts) produces for it, written out by hand and run straight on the
 * stack's database with `pg`. Each pair is timed one request at a time, API and SQL alternating, so both
 * see the same machine. The page's ids of both must match: a difference is flagged in the table and ends
 * the run with exit code 1, and any answer but a 200 fails it, except a 400 where a case expects one (a path
 * not served yet, a query past its budget). Prints one markdown table, the bodies, and
 * `EXPLAIN (ANALYZE, BUFFERS)` of every query whose API p99 is over 50 ms; raw times go to bench/results/.
 * `npm run bench:query`.
 * Settings: BENCH_QUERY_RUNS (200), BENCH_QUERY_WARMUP (10), BENCH_QUERY_BUDGET_S (40: a query whose runs
 * would take longer gets fewer, at least 10), QUERY_TIMEOUT_MS (3000, the services' statement budget, also
 * applied to the direct SQL), BENCH_CONTACTS, BENCH_DEALS.
 */
const ROOT = join(__dirname, '..', '..');
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 200);
const WARMUP = Number(process.env.BENCH_QUERY_WARMUP ?? 10);
const BUDGET_MS = Number(process.env.BENCH_QUERY_BUDGET_S ?? 40) * 1000;
const MIN_RUNS = 10;
const QUERY_TIMEOUT_MS = Number(process.env.QUERY_TIMEOUT_MS ?? 3000);
/** The most ids one condition across services may match (QUERY_RELATED_IDS_MAX of the services). */
const RELATED_IDS_MAX = Number(process.env.QUERY_RELATED_IDS_MAX ?? 10_000);
const SLOW_P99_MS = 50;
const EXPLAIN_LIMIT_MS = 30_000;
const PAGE_SIZE = 50;

type Schema = 'contacts' | 'deals';
type Rows = Array<Record<string, unknown>>;

interface Statement {
  text: string;
  params: unknown[];
}

interface QueryCase {
  label: string;
  /** `POST /<object>/query`. */
  object: string;
  body: Record<string, unknown>;
  /** The service whose connection settings (search_path) the statement runs under. */
  schema: Schema;
  /** What the query runner compiles the body to: the statement that reads the page. */
  sql: Statement;
  /**
   * Statements the services run before it, in order, each on its own service's connection (a path across
   * services: the candidates, then the other service's matching ids); `bind` makes the page statement's
   * parameters from their rows.
   */
  prelude?: { steps: Array<{ schema: Schema; sql: (previous: Rows[]) => Statement }>; bind: (previous: Rows[]) => unknown[] };
  /** A path the API does not serve yet: a 400 `validation_failed` is reported as such, not as a failure. */
  unsupportedYet?: boolean;
  /** May run past QUERY_TIMEOUT_MS: a 400 `query_too_expensive` is its answer, not a failure. */
  mayTimeOut?: boolean;
  /** Time page `number` alone: the cursor comes from walking the pages before it; `after` is the statement past a row's sort key and id. */
  page?: { number: number; after: (key: string, id: string) => Statement };
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
  runs: number;
  api?: Side;
  /** Why the API side was not timed. */
  apiNote?: string;
  sql: Side;
  idsMatch?: boolean;
  plan?: string;
}

/** A custom field's value as the compiler reads it: null unless the stored JSON has the definition's type. */
const custom = (alias: string, name: string, jsonType: 'string' | 'number', cast: 'text' | 'numeric') =>
  `(CASE WHEN jsonb_typeof(${alias}.custom_fields->'${name}') = '${jsonType}' THEN (${alias}.custom_fields->>'${name}')::${cast} END)`;
const REGION = custom('c', 'region', 'string', 'text');
const TIER = custom('d', 'tier', 'string', 'text');
const SEATS = custom('d', 'seats', 'number', 'numeric');
/** A search box built from $or of $contains: words no contact has, so every row is read and tested. */
const SEARCH_WORDS = ['zephyrine', 'quillon', 'vexmoor', 'jubbly'];
const SEARCH_PATHS = ['first_name', 'last_name', 'email', 'company.name'];

function cases(): QueryCase[] {
  const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
  const email = (g: number) => `person${g}@${['acme.com', 'globex.io', 'initech.net', 'umbrella.org'][g % 4]}`;
  const oneEmail = email(Math.floor(CONTACTS / 2));
  const weekStart = daysAgo(365);
  const weekEnd = daysAgo(358);
  const recent = daysAgo(7);
  const companies = Array.from({ length: 500 }, (_, i) => companyId(1 + i * 40));
  // The contact of deal 1 (deals point at contact 1 + 7g).
  const dealContact = email(8);
  return [
    {
      label: 'contacts, no filter (first page)',
      object: 'contacts',
      schema: 'contacts',
      body: {},
      sql: { text: `SELECT c.* FROM contacts c  WHERE (TRUE) AND (TRUE) ORDER BY c.id ASC LIMIT 51`, params: [] },
    },
    {
      label: 'contacts, email equality (one match)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { email: oneEmail } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [oneEmail],
      },
    },
    {
      label: 'contacts, created_at in one week a year ago',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { created_at: { $gte: weekStart, $lt: weekEnd } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.created_at >= $1::timestamptz AND c.created_at IS NOT NULL) AND (c.created_at < $2::timestamptz AND c.created_at IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [weekStart, weekEnd],
      },
    },
    {
      label: 'contacts, sorted by created_at desc',
      object: 'contacts',
      schema: 'contacts',
      body: { sort: [{ field: 'created_at', direction: 'desc' }] },
      sql: {
        text: `SELECT c.*, (c.created_at)::text AS "~k0" FROM contacts c  WHERE (TRUE) AND (TRUE) ORDER BY c.created_at DESC, c.id ASC LIMIT 51`,
        params: [],
      },
    },
    {
      label: 'contacts, $and / $or / $not tree',
      object: 'contacts',
      schema: 'contacts',
      body: {
        filter: { $and: [{ stage: 'customer' }, { $or: [{ source: 'referral' }, { icp_score: { $gte: 90 } }] }, { $not: { owner_id: { $exists: true } } }] },
      },
      sql: {
        text:
          `SELECT c.* FROM contacts c  WHERE (((c.stage = $1::text AND c.stage IS NOT NULL) AND ((c.source = $2::text AND c.source IS NOT NULL) OR ` +
          `(c.icp_score >= $3::bigint AND c.icp_score IS NOT NULL)) AND NOT ((c.owner_id IS NOT NULL)))) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['customer', 'referral', 90],
      },
    },
    {
      label: 'contacts, custom field equality (region, a fifth match)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { 'custom_fields.region': 'apac' } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.custom_fields @> $2::jsonb AND ${REGION} = $1::text AND ${REGION} IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['apac', JSON.stringify({ region: 'apac' })],
      },
    },
    {
      label: 'contacts, company.domain (one company)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { 'company.domain': 'company777.example' } },
      sql: {
        text: `SELECT c.*, c_company.id AS "~j_company" FROM contacts c LEFT JOIN companies c_company ON c_company.id = c.company_id WHERE ((lower(c_company.domain) = lower($1::text) AND c_company.domain = $1::text AND c_company.domain IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['company777.example'],
      },
    },
    {
      label: 'contacts, company_id $in 500 values',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { company_id: { $in: companies } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.company_id = ANY($1::text[]) AND c.company_id IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [companies],
      },
    },
    {
      label: 'contacts, last_name $contains (11 match)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { last_name: { $contains: 'KNUTH4252' } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.last_name ILIKE $1::text AND c.last_name IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['%KNUTH4252%'],
      },
    },
    {
      label: 'contacts, owner_id $exists',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { owner_id: { $exists: true } } },
      sql: { text: `SELECT c.* FROM contacts c  WHERE ((c.owner_id IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`, params: [] },
    },
    {
      label: 'contacts, fields with company.* and owner.*, 100 a page',
      object: 'contacts',
      schema: 'contacts',
      body: {
        filter: { stage: 'customer' },
        fields: ['email', 'first_name', 'last_name', 'icp_score', 'custom_fields.region', 'company.name', 'company.domain', 'owner.name'],
        limit: 100,
      },
      sql: {
        text:
          `SELECT c.id AS id, c.email AS "~f0", c.first_name AS "~f1", c.last_name AS "~f2", c.icp_score AS "~f3", c.custom_fields->'region' AS "~f4", ` +
          `c_company.name AS "~f5", c_company.domain AS "~f6", c_owner.name AS "~f7", c_company.id AS "~j_company", c_owner.id AS "~j_owner" ` +
          `FROM contacts c LEFT JOIN companies c_company ON c_company.id = c.company_id LEFT JOIN users c_owner ON c_owner.id = c.owner_id ` +
          `WHERE ((c.stage = $1::text AND c.stage IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 101`,
        params: ['customer'],
      },
    },
    {
      label: `contacts, no index serves it: ${SEARCH_WORDS.length} absent words $contains in first_name, last_name, email or company.name`,
      object: 'contacts',
      schema: 'contacts',
      mayTimeOut: true,
      body: { filter: { $or: SEARCH_WORDS.flatMap((word) => SEARCH_PATHS.map((path) => ({ [path]: { $contains: word } }))) } },
      sql: {
        text:
          `SELECT c.*, c_company.id AS "~j_company" FROM contacts c LEFT JOIN companies c_company ON c_company.id = c.company_id WHERE ((` +
          SEARCH_WORDS.flatMap((_, w) =>
            ['c.first_name', 'c.last_name', 'c.email', 'c_company.name'].map((x, f) => `(${x} ILIKE $${w * 4 + f + 1}::text AND ${x} IS NOT NULL)`),
          ).join(' OR ') +
          `)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: SEARCH_WORDS.flatMap((word) => SEARCH_PATHS.map(() => `%${word}%`)),
      },
    },
    {
      label: 'activities, type and contact.icp_score (relation path)',
      object: 'activities',
      schema: 'contacts',
      body: { filter: { type: 'meeting', 'contact.icp_score': { $gte: 95 } } },
      sql: {
        text:
          `SELECT a.*, a_contact.id AS "~j_contact" FROM activities a LEFT JOIN contacts a_contact ON a_contact.id = a.contact_id ` +
          `WHERE ((a.type = $1::text AND a.type IS NOT NULL) AND (a_contact.icp_score >= $2::bigint AND a_contact.icp_score IS NOT NULL)) AND (TRUE) ORDER BY a.id ASC LIMIT 51`,
        params: ['meeting', 95],
      },
    },
    {
      label: 'deals, value range (0.1% match)',
      object: 'deals',
      schema: 'deals',
      body: { filter: { value: { $gte: 50_000_000, $lt: 50_100_000 } } },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.value >= $1::bigint AND d.value IS NOT NULL) AND (d.value < $2::bigint AND d.value IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [50_000_000, 50_100_000],
      },
    },
    {
      label: 'deals, created_at in the last 7 days',
      object: 'deals',
      schema: 'deals',
      body: { filter: { created_at: { $gte: recent } } },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.created_at >= $1::timestamptz AND d.created_at IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [recent],
      },
    },
    {
      label: 'deals, custom field equality (tier, 0.1% match)',
      object: 'deals',
      schema: 'deals',
      body: { filter: { 'custom_fields.tier': 'strategic' } },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.custom_fields @> $2::jsonb AND ${TIER} = $1::text AND ${TIER} IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: ['strategic', JSON.stringify({ tier: 'strategic' })],
      },
    },
    {
      label: 'deals, stage.type (relation path)',
      object: 'deals',
      schema: 'deals',
      body: { filter: { 'stage.type': 'won' } },
      sql: {
        text: `SELECT d.*, d_stage.id AS "~j_stage" FROM deals d LEFT JOIN stages d_stage ON d_stage.id = d.stage_id WHERE ((d_stage.type = $1::text AND d_stage.type IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: ['won'],
      },
    },
    {
      label: 'deals, contact.email (path across services)',
      object: 'deals',
      schema: 'deals',
      unsupportedYet: true,
      body: { filter: { 'contact.email': dealContact } },
      // The deals service reads which contacts its candidate rows reference (too many here to send, so the
      // contacts service is not told), the contacts service answers the ids the condition matches, and the
      // deals service reads the page of deals referencing them.
      prelude: {
        steps: [
          {
            schema: 'deals',
            sql: () => ({
              text: `SELECT DISTINCT d.contact_id AS ref FROM deals d  WHERE ((TRUE)) AND d.contact_id IS NOT NULL LIMIT ${RELATED_IDS_MAX + 1}`,
              params: [],
            }),
          },
          {
            schema: 'contacts',
            sql: ([candidates]) =>
              candidates.length <= RELATED_IDS_MAX
                ? {
                    text: `SELECT c.id FROM contacts c WHERE (lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL) AND c.id = ANY($2::text[]) LIMIT ${RELATED_IDS_MAX + 1}`,
                    params: [dealContact, candidates.map((row) => row.ref)],
                  }
                : {
                    text: `SELECT c.id FROM contacts c WHERE (lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL) LIMIT ${RELATED_IDS_MAX + 1}`,
                    params: [dealContact],
                  },
          },
        ],
        bind: ([, matched]) => [matched.map((row) => row.id)],
      },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.contact_id = ANY($1::text[]) AND d.contact_id IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [],
      },
    },
    {
      label: 'deals, sorted by value desc, page 10 (the 10th request alone)',
      object: 'deals',
      schema: 'deals',
      body: { sort: [{ field: 'value', direction: 'desc' }] },
      sql: { text: `SELECT d.*, (d.value)::text AS "~k0" FROM deals d  WHERE (TRUE) AND (TRUE) ORDER BY d.value DESC, d.id ASC LIMIT 51`, params: [] },
      page: {
        number: 10,
        after: (key, id) => ({
          text:
            `SELECT d.*, (d.value)::text AS "~k0" FROM deals d  WHERE (TRUE) AND ((d.value < $1::bigint) OR (d.value = $1::bigint AND d.id > $2::text)) ` +
            `ORDER BY d.value DESC, d.id ASC LIMIT 51`,
          params: [key, id],
        }),
      },
    },
    {
      label: 'deals, sorted by a custom field (seats desc), with fields',
      object: 'deals',
      schema: 'deals',
      body: {
        filter: { 'custom_fields.seats': { $exists: true } },
        sort: [{ field: 'custom_fields.seats', direction: 'desc' }],
        fields: ['name', 'value', 'custom_fields.seats', 'custom_fields.tier', 'stage.name'],
      },
      sql: {
        text:
          `SELECT d.id AS id, d.name AS "~f0", d.value AS "~f1", d.custom_fields->'seats' AS "~f2", d.custom_fields->'tier' AS "~f3", d_stage.name AS "~f4", ` +
          `(${SEATS})::text AS "~k0", d_stage.id AS "~j_stage" FROM deals d LEFT JOIN stages d_stage ON d_stage.id = d.stage_id ` +
          `WHERE ((${SEATS} IS NOT NULL)) AND (TRUE) ORDER BY ${SEATS} DESC, d.id ASC LIMIT 51`,
        params: [],
      },
    },
  ];
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

async function measure(q: QueryCase, stack: BenchStack, clients: Clients): Promise<Measured> {
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
  const measured: Measured = { query: q, runs, sql: sqlSide, ...(runApi ? { api: apiSide } : { apiNote: unsupported }) };
  if (runApi && apiSide.ids && sqlSide.ids) measured.idsMatch = apiSide.ids.join() === sqlSide.ids.join() && apiSide.hasMore === sqlSide.hasMore;
  const p99 = runApi ? percentile(apiSide.times, 99) : percentile(sqlSide.times, 99);
  if (p99 > SLOW_P99_MS) {
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

function row(m: Measured, n: number): string {
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
    try {
      for (const q of cases()) {
        const m = await measure(q, stack, clients);
        results.push(m);
        const api = m.api ? `API p50 ${ms(percentile(m.api.times, 50))} ms` : m.apiNote;
        process.stderr.write(`bench: ${results.length}. ${q.label}: ${m.runs} runs, ${api}, SQL p50 ${ms(percentile(m.sql.times, 50))} ms\n`);
      }
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
      ...results.map((m, i) => row(m, i + 1)),
      '',
      'Bodies:',
      '',
      ...results.map((m, i) => `${i + 1}. \`POST /${m.query.object}/query\` \`${shown(m.query.body)}\``),
      '',
      mismatches.length
        ? `Ids differ between the API and the direct SQL for: ${mismatches.map((m) => results.indexOf(m) + 1).join(', ')}.`
        : 'The API and the direct SQL returned the same ids for every query both answered.',
      '',
      ...(slow.length ? [`Plans of the direct SQL of every query over ${SLOW_P99_MS} ms at p99:`, ''] : []),
      ...slow.flatMap((m) => [
        `${results.indexOf(m) + 1}. ${m.query.label}${m.query.page ? ` (the statement of page ${m.query.page.number})` : ''}`,
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
