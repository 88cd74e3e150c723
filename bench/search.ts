import { CursorCodec } from '@crm/common';
import { SEARCH_BUILT_IN_OBJECTS, SearchHitView } from '@crm/contracts';
import { searchSlice, SearchTarget } from '@crm/records';
import { mkdirSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { performance } from 'perf_hooks';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { execFileSync } from 'child_process';
import { BenchApp, BenchStack, machine, percentile, runBenchmark, startBenchStack, thisBuild, withBenchStack } from './bench-stack';
import { FIRST, idOf, insertCompanies, stem } from './seed-words';

/**
 * `npm run bench:search`: GET /search and the duplicate routes (docs/search.md) on BENCH_SEARCH_CONTACTS
 * contacts (1,000,000), BENCH_SEARCH_COMPANIES companies (200,000) and BENCH_SEARCH_DEALS deals (200,000),
 * written straight into a throw-away database with the search indexes dropped during the seed and built
 * after it (building a trigram index once is far faster than updating it row by row). Each case runs
 * through the gateway beside the services' own code (searchSlice over the same targets, DuplicatesService)
 * on one `pg` client, so the SQL is exactly what the services send; API and SQL alternate one request at a
 * time. Both answers' ids must be equal (a difference ends the run with exit code 1). Prints a markdown
 * table and EXPLAIN (ANALYZE, BUFFERS) of every statement of each case and build (EXECUTE for a prepared one, so
 * its planning time is what a request pays); raw times go to bench/results/.
 * Settings: BENCH_SEARCH_CONTACTS, BENCH_SEARCH_COMPANIES, BENCH_SEARCH_DEALS, BENCH_SEARCH_RUNS (100),
 * BENCH_SEARCH_WARMUP (5), BENCH_SEARCH_CASE_SECONDS (60), BENCH_SEARCH_DATABASE (a database to seed once
 * and keep: a later run with the same name and sizes times the data already there), BENCH_SEARCH_SEED_ONLY
 * (1: stop after the seed, so the timed part can run alone, e.g. under the machine's bench lock),
 * BENCH_SEARCH_BASE_DIR (a checkout holding the build before, `dist/`: its stack runs beside this one on the same
 * database, and each case alternates both builds' requests and SQL, so before and after come from one run). A case
 * this build answers differently on purpose (`changed`: the search bounds) compares each build with itself only, and
 * the build before may refuse it past its time budget: its refusals are counted in the table, not timed.
 */
const ROOT = join(__dirname, '..', '..');
const CONTACTS = Number(process.env.BENCH_SEARCH_CONTACTS ?? 1_000_000);
const COMPANIES = Number(process.env.BENCH_SEARCH_COMPANIES ?? 200_000);
const DEALS = Number(process.env.BENCH_SEARCH_DEALS ?? 200_000);
const WORK_ITEMS = Math.round(CONTACTS / 20);
const RUNS = Number(process.env.BENCH_SEARCH_RUNS ?? 100);
const WARMUP = Number(process.env.BENCH_SEARCH_WARMUP ?? 5);
/** A case stops after this many seconds (with at least 5 measured runs), so one slow case cannot hold the run for hours. */
const CASE_SECONDS = Number(process.env.BENCH_SEARCH_CASE_SECONDS ?? 60);
const DATABASE = process.env.BENCH_SEARCH_DATABASE || undefined;
const SEED_ONLY = process.env.BENCH_SEARCH_SEED_ONLY === '1';
const BASE_DIR = process.env.BENCH_SEARCH_BASE_DIR || undefined;

/**
 * A build's own search code, loaded from its `dist`: compiling app sources into this project would emit them
 * into dist/apps without the app build's import rewriting.
 */
interface Code {
  DuplicatesService: new (
    source: DataSource,
    cursors: CursorCodec,
    settings: { queryTimeoutMs: number },
  ) => Record<'ofContact' | 'ofCompany', (id: string, query: object) => Promise<{ data: Array<{ id: string }> }>> &
    Record<'ofContactDraft', (draft: object, query: object) => Promise<{ data: Array<{ id: string }> }>>;
  /** The contacts service's own targets by object (a build before 6447119 exported them as LOCAL_TARGETS instead). */
  localTarget?: (object: string) => SearchTarget | undefined;
  LOCAL_TARGETS?: Record<string, SearchTarget>;
  byRank: (a: SearchHitView, b: SearchHitView) => number;
  DEALS_SEARCH_TARGET: SearchTarget;
  searchSlice: typeof searchSlice;
}

function codeOf(root: string): Code {
  const fromApp = (path: string) => require(join(root, 'dist', 'apps', path));
  return {
    ...fromApp('contacts/src/search/duplicates.service.js'),
    ...fromApp('contacts/src/search/search-targets.js'),
    ...fromApp('contacts/src/search/search.service.js'),
    ...fromApp('deals/src/search/search.controller.js'),
    searchSlice: require(join(root, 'dist', 'libs', 'runtime', 'src', 'index.js')).searchSlice,
  };
}

const localTargets = (code: Code): SearchTarget[] =>
  code.LOCAL_TARGETS ? Object.values(code.LOCAL_TARGETS) : SEARCH_BUILT_IN_OBJECTS.flatMap((object) => code.localTarget?.(object) ?? []);

const ASCII_FIRST = `ARRAY['ada','grace','alan','edsger','barbara','donald','margaret','ken','dennis','frances','zoe','jose','chloe','soren','amelie','noah','liam','mia','emma','oliver']`;
/** A phone's seven-digit subscriber part for row g: distinct for every g under ten million. */
const subscriber = (g: string) => `lpad(((${g}::bigint * 7919) % 10000000)::text, 7, '0')`;

async function seed(pg: Client, pipeline: { id: string; stages: Array<{ id: string }> }): Promise<boolean> {
  await pg.query(`SET search_path TO contacts, public`);
  const [{ contacts, deals }] = (await pg.query(`SELECT (SELECT count(*) FROM contacts.contacts) AS contacts, (SELECT count(*) FROM deals.deals) AS deals`))
    .rows;
  if (Number(contacts) === CONTACTS && Number(deals) === DEALS) return false;
  if (Number(contacts) || Number(deals)) throw new Error(`${DATABASE} holds another data set (${contacts} contacts, ${deals} deals)`);
  const indexes = (
    await pg.query(`SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE schemaname IN ('contacts', 'deals') AND indexname LIKE '%search%'`)
  ).rows as Array<{ schemaname: string; indexname: string; indexdef: string }>;
  for (const index of indexes) await pg.query(`DROP INDEX ${index.schemaname}.${index.indexname}`);
  const h = `(hashint4(g)::bigint & 2147483647)`;
  await insertCompanies(pg, COMPANIES, 'com');
  // Half have a phone, written in one of three formats; two in three work at a company.
  await pg.query(
    `INSERT INTO contacts.contacts (id, email, first_name, last_name, phone, title, stage, source, company_id, created_at, updated_at)
     SELECT ${idOf('cont', 'g')},
            (${ASCII_FIRST})[1 + g % 20] || '.' || lower(${stem(h)}) || g || '@' || CASE WHEN g % 2 = 0 THEN 'mail' || (g % 50) || '.example' ELSE 'co' || (1 + g % $2) || '.com' END,
            (${FIRST})[1 + g % 20], ${stem(h)},
            CASE WHEN g % 2 = 0 THEN (ARRAY['+1 415 ', '(415) ', '415.'])[1 + g % 3] || substr(${subscriber('g')}, 1, 3) || '-' || substr(${subscriber('g')}, 4) END,
            (ARRAY['CEO','CTO','Engineer','Sales Manager','Account Executive','Designer','Analyst'])[1 + g % 7],
            (ARRAY['lead','prospect','customer'])[1 + g % 3], 'organic',
            CASE WHEN g % 3 <> 0 THEN ${idOf('comp', `1 + g % $2`)} END,
            now() - interval '1 second' * ($1 - g), now()
     FROM generate_series(1, $1) g`,
    [CONTACTS, COMPANIES],
  );
  await pg.query(
    `INSERT INTO contacts.activities (id, type, status, subject, occurred_at, contact_id, created_at, updated_at)
     SELECT ${idOf('act', 'g')}, 'call', 'completed', 'Call with ' || ${stem(h)}, now(), ${idOf('cont', `1 + g % $2`)}, now(), now()
     FROM generate_series(1, $1) g`,
    [WORK_ITEMS, CONTACTS],
  );
  await pg.query(
    `INSERT INTO contacts.tasks (id, title, priority, status, due_at, contact_id, created_at, updated_at)
     SELECT ${idOf('task', 'g')}, 'Follow up ' || ${stem(h)}, 'medium', 'pending', now(), ${idOf('cont', `1 + g % $2`)}, now(), now()
     FROM generate_series(1, $1) g`,
    [WORK_ITEMS, CONTACTS],
  );
  await pg.query(
    `INSERT INTO deals.deals (id, name, pipeline_id, stage_id, company_id, value, status, stage_entered_at, created_at, updated_at)
     SELECT ${idOf('deal', 'g')}, ${stem(h)} || ' ' || (ARRAY['renewal','expansion','pilot','upgrade'])[1 + g % 4], $2, $3,
            ${idOf('comp', `1 + g % $4`)}, (g * 7919) % 100000000, 'open', now(), now(), now()
     FROM generate_series(1, $1) g`,
    [DEALS, pipeline.id, pipeline.stages[0].id, COMPANIES],
  );
  for (const index of indexes) await pg.query(index.indexdef);
  for (const table of ['contacts.companies', 'contacts.contacts', 'contacts.activities', 'contacts.tasks', 'deals.deals']) await pg.query(`ANALYZE ${table}`);
  return true;
}

/** A statement's text, or a named prepared statement's (`{ name, text }`, which the services hand to `pg` through TypeORM). */
type Statement = string | { name: string; text: string };
type Run = (sql: Statement, params?: unknown[]) => Promise<any[]>;

/**
 * The services' data access on one `pg` client: `query` outside a transaction in the contacts schema,
 * `transaction` in `schema` as TypeORM runs it. With `plans`, statements in a transaction are also explained
 * (ANALYZE, BUFFERS).
 */
function direct(pg: Client, schema: string, plans?: string[]): DataSource {
  const run: Run = async (sql, params = []) => (await pg.query(sql, params)).rows;
  const inTransaction: Run = async (sql, params = []) => {
    const text = typeof sql === 'string' ? sql : sql.text;
    if (!plans || !/^\s*(--[^\n]*\n\s*)*\(?(SELECT|WITH)/i.test(text)) return run(sql, params);
    // A prepared statement is explained as it runs: EXECUTE shows the plan its connection has cached (generic
    // or custom), and its planning time is what is paid per request. Running it first prepares it.
    if (typeof sql !== 'string') await run(sql, params);
    // EXECUTE takes no bind parameters: its arguments are literals (coerced to the statement's parameter types).
    const literal = (v: unknown): string =>
      v === null || v === undefined ? 'NULL' : Array.isArray(v) ? `ARRAY[${v.map(literal).join(', ')}]::text[]` : pg.escapeLiteral(String(v));
    const explained = typeof sql === 'string' ? sql : `EXECUTE ${sql.name}(${params.map(literal).join(', ')})`;
    const plan = await run(`EXPLAIN (ANALYZE, BUFFERS) ${explained}`, typeof sql === 'string' ? params : []);
    plans.push(
      `${text.replace(/\s+/g, ' ').trim()}\n-- ${typeof sql === 'string' ? '' : `prepared ${sql.name} `}${JSON.stringify(params)}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`,
    );
    // The answer too: later statements depend on earlier ones (the query's words, the typo dictionary).
    return run(sql, params);
  };
  const source = {
    // The duplicate routes send one statement outside a transaction: explained too.
    query: plans ? inTransaction : run,
    // QueryBudget (the duplicate routes) opens its transaction on a runner of its own: here, the one client.
    createQueryRunner: () => ({ connect: async () => undefined, release: async () => undefined, query: plans ? inTransaction : run }),
    async transaction<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
      await run('BEGIN');
      try {
        await run(`SET LOCAL search_path TO ${schema}, public`);
        const out = await work({ query: inTransaction } as unknown as EntityManager);
        await run('COMMIT');
        return out;
      } catch (err) {
        await run('ROLLBACK');
        throw err;
      }
    },
  };
  return source as unknown as DataSource;
}

interface Case {
  label: string;
  target: number;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** This build answers differently from the build before on purpose (docs/search.md, "Bounds"): each build's API and SQL must still agree. */
  changed?: boolean;
  /** The same answer from the services' code on one client. */
  sql(pg: Client, code: Code, plans?: string[]): Promise<Array<{ id: string }>>;
}

const LIMIT = 20;

/** GET /search over every object, as the contacts service merges its slice with the deals service's. */
function searchCase(label: string, target: number, q: string, changed = false): Case {
  return {
    label,
    target,
    changed,
    method: 'GET',
    path: `/search?q=${encodeURIComponent(q)}&limit=${LIMIT}`,
    async sql(pg, code, plans) {
      const input = { q, limit: LIMIT + 1 };
      const local = await direct(pg, 'contacts', plans).transaction((m) => code.searchSlice(m, localTargets(code), input));
      const deals = await direct(pg, 'deals', plans).transaction((m) => code.searchSlice(m, [code.DEALS_SEARCH_TARGET], input));
      return [...local, ...deals].sort(code.byRank).slice(0, LIMIT) as SearchHitView[];
    },
  };
}

/** Forty distinct four-letter words found nowhere, 199 characters. */
const NONSENSE = Array.from({ length: 40 }, (_, i) => `zq${'bcdfghjklm'[i % 10]}${'vwxyz'[Math.floor(i / 10)]}`).join(' ');

const codec = new CursorCodec(['bench']);
// The services' budget (QUERY_TIMEOUT_MS) would refuse what the timings are meant to show: ten minutes here.
const duplicates = (pg: Client, code: Code, plans?: string[]) => new code.DuplicatesService(direct(pg, 'contacts', plans), codec, { queryTimeoutMs: 600_000 });

const p = (values: number[], q: number) => Math.round(percentile(values, q) * 10) / 10;

interface Build {
  name: string;
  stack: BenchStack;
  code: Code;
}

const STACK = { apps: ['contacts', 'deals', 'gateway'] as BenchApp[], env: { RPC_TIMEOUT_MS: '30000' }, database: DATABASE };

runBenchmark(async () => {
  // The build before (when given) starts first: both run the same migrations on the one database, this one's last.
  const base = BASE_DIR && !SEED_ONLY ? await startBenchStack(BASE_DIR, STACK) : undefined;
  try {
    await withBenchStack(ROOT, (stack) => timed(stack, base), STACK);
  } finally {
    await base?.stop();
  }
});

async function timed(stack: BenchStack, base: BenchStack | undefined): Promise<void> {
  const builds: Build[] = [
    ...(base && BASE_DIR ? [{ name: `before (${gitIn(BASE_DIR)})`, stack: base, code: codeOf(BASE_DIR) }] : []),
    { name: `this (${thisBuild()})`, stack, code: codeOf(ROOT) },
  ];
  const pipeline = await stack.post('/pipelines', { name: 'Search', stages: [{ name: 'Open', type: 'open' }] });
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  const started = Date.now();
  let mismatch = false;
  try {
    const seeded = await seed(pg, pipeline);
    const seedSeconds = Math.round((Date.now() - started) / 1000);
    process.stdout.write(
      `${seeded ? 'seeded' : `reused ${DATABASE} with`} ${CONTACTS} contacts, ${COMPANIES} companies, ${DEALS} deals${seeded ? ` in ${seedSeconds} s` : ''}\n`,
    );
    if (SEED_ONLY) return;
    // One contact with a phone and a company, and a company, from the middle of the data set.
    const [person] = (
      await pg.query(`SELECT * FROM contacts.contacts WHERE phone IS NOT NULL AND company_id IS NOT NULL ORDER BY id OFFSET $1 LIMIT 1`, [
        Math.floor(CONTACTS / 6),
      ])
    ).rows;
    const [company] = (await pg.query(`SELECT * FROM contacts.companies WHERE id = $1`, [person.company_id])).rows;
    const last: string = person.last_name;
    const swapped = `${last.slice(0, 2)}${last[3]}${last[2]}${last.slice(4)}`;
    const digits = (person.phone as string).replace(/\D/g, '').slice(-7);
    const draft = { email: person.email.replace('@', '+x@'), first_name: person.first_name, last_name: last, company_id: person.company_id };
    const cases: Case[] = [
      searchCase(`exact: a surname (${last})`, 50, last),
      searchCase('exact: an email', 50, person.email),
      searchCase('exact: a phone in another format', 50, `+1 (415) ${digits.slice(0, 3)}-${digits.slice(3)}`),
      searchCase('exact: an id', 50, person.id),
      searchCase(`exact: a company name (${company.name})`, 50, company.name),
      searchCase(`prefix: a surname's start (${last.slice(0, 4)})`, 50, last.slice(0, 4)),
      searchCase(`prefix: first name and surname start`, 50, `${person.first_name} ${last.slice(0, 3)}`),
      searchCase(`typo: two letters swapped (${swapped})`, 150, swapped),
      searchCase(`typo: first name and surname with a typo`, 150, `${person.first_name} ${swapped}`),
      // The worst a query can ask of each tier: a word in half the contacts' emails and every company's
      // domain, 40 four-letter nonsense words (the 200-character limit), a single letter.
      searchCase('exact: a word of half the rows (com)', 50, 'com', true),
      searchCase('typo: 40 four-letter nonsense words', 150, NONSENSE, true),
      searchCase('prefix: one letter (k)', 50, 'k'),
      {
        label: 'duplicates of one contact',
        target: 50,
        method: 'GET',
        path: `/contacts/${person.id}/duplicates`,
        sql: async (db, code, plans) => (await duplicates(db, code, plans).ofContact(person.id, {})).data,
      },
      {
        label: 'duplicates of a draft contact',
        target: 50,
        method: 'POST',
        path: '/contacts/duplicates',
        body: draft,
        sql: async (db, code, plans) => (await duplicates(db, code, plans).ofContactDraft(draft, {})).data,
      },
      {
        label: 'duplicates of one company',
        target: 50,
        method: 'GET',
        path: `/companies/${company.id}/duplicates`,
        sql: async (db, code, plans) => (await duplicates(db, code, plans).ofCompany(company.id, {})).data,
      },
    ];
    await pg.query(`SET search_path TO contacts, public`);
    const lines = [
      `${machine()}, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}, ${CONTACTS} contacts, ${COMPANIES} companies, ${DEALS} deals, ${WORK_ITEMS} activities and tasks; ${RUNS} runs after ${WARMUP} warm-up`,
      '',
      '| Case | build | target p99 | runs | hits | API p50 ms | API p99 ms | SQL p50 ms | SQL p99 ms | p50 API/SQL | same ids |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ];
    const explains: string[] = [];
    const raw: Record<string, Record<string, { api: number[]; sql: number[] }>> = {};
    for (const c of cases) {
      const runs = builds.map((build) => ({
        build,
        api: [] as number[],
        sql: [] as number[],
        answer: [] as string[],
        rows: [] as string[],
        refused: [] as string[],
      }));
      const caseStarted = performance.now();
      for (let i = 0; i < WARMUP + RUNS && (i < WARMUP + 5 || performance.now() - caseStarted < CASE_SECONDS * 1000); i++) {
        // The builds take turns going first, so neither always follows the other's request.
        for (const run of i % 2 ? [...runs].reverse() : runs) {
          let t = performance.now();
          const res = await fetch(`${run.build.stack.api}${c.path}`, {
            method: c.method,
            headers: { 'Content-Type': 'application/json', 'X-Api-Key': run.build.stack.key },
            ...(c.body ? { body: JSON.stringify(c.body) } : {}),
          });
          const answer = (await res.json()) as { data: Array<{ id: string }>; error?: { code?: string } };
          // The build before may refuse a case this build was made to answer (query_too_expensive past its
          // time budget): counted, not timed; this build refusing ends the run.
          if (res.status !== 200 && (run.build.stack === stack || !c.changed))
            throw new Error(`${c.label} (${run.build.name}): ${res.status} ${JSON.stringify(answer)}`);
          if (res.status !== 200) run.refused.push(`${res.status} ${answer.error?.code ?? ''}`.trim());
          else if (i >= WARMUP) run.api.push(performance.now() - t);
          if (res.status === 200) run.answer = answer.data.map((r) => r.id);
          t = performance.now();
          run.rows = (await c.sql(pg, run.build.code)).map((r) => r.id);
          if (i >= WARMUP) run.sql.push(performance.now() - t);
        }
      }
      raw[c.label] = {};
      for (const { build, api, sql, answer, rows, refused } of runs) {
        // Both builds must give the same answer, each through the API and on its own SQL; a changed case's
        // builds need only agree with themselves (and a refused API answer is compared with nothing).
        const others = c.changed ? [] : runs.map((r) => r.answer);
        const own = refused.length ? [] : [rows];
        const same = [...own, ...others].every((ids) => JSON.stringify(ids) === JSON.stringify(refused.length ? rows : answer));
        const changed = c.changed && runs.some((r) => JSON.stringify(r.rows) !== JSON.stringify(rows));
        mismatch ||= !same;
        raw[c.label][build.name] = { api, sql };
        const refusals = refused.length ? ` (${refused.length} × ${[...new Set(refused)].join(', ')})` : '';
        lines.push(
          `| ${c.label} | ${build.name} | ${c.target} | ${api.length}${refusals} | ${refused.length ? rows.length : answer.length} | ${api.length ? p(api, 50) : '–'} | ${api.length ? `${p(api, 99)}${p(api, 99) > c.target ? ' ⚠' : ''}` : '–'} | ${p(sql, 50)} | ${p(sql, 99)} | ${api.length ? `${(percentile(api, 50) / percentile(sql, 50)).toFixed(1)}x` : '–'} | ${same ? (changed ? 'changed' : 'same') : 'DIFFERENT'} |`,
        );
      }
      // Every build's plans, so planning and execution can be compared between them.
      for (const build of builds) {
        const plans: string[] = [];
        await c.sql(pg, build.code, plans);
        explains.push(`### ${c.label} — ${build.name}\n${c.method} ${c.path}\n\n${plans.join('\n\n')}`);
      }
    }
    process.stdout.write(`${lines.join('\n')}\n\n${explains.join('\n\n')}\n`);
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', `search-${Date.now()}.json`), JSON.stringify(raw));
  } finally {
    await pg.end();
  }
  if (mismatch) process.exitCode = 1;
}

const gitIn = (dir: string) => {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return dir;
  }
};
