import { readFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { BenchStack, machine, runBenchmark, startBenchStack, thisBuild } from './bench-stack';
import { askEveryRecord, ApiCall, loadLabelledSet, measure, qualityTable } from './duplicates-labels';
import { generateDuplicatesSet, LabelledSet } from './duplicates-set';
import { askSearch, labelledQueries, searchTable } from './search-labels';
import { FIRST, idOf, insertCompanies, stem } from './seed-words';

/**
 * `npm run bench:duplicates`: how good the duplicate routes' answers are (docs/search.md, "Duplicates").
 * Loads a labelled set (bench/duplicates-set.ts) into a stack through the API, asks
 * `GET /<object>/:id/duplicates` for every contact and company at the default `min_score`, and prints
 * precision and recall per kind of variant and overall, and the p50/p99 latency; then asks GET /search
 * labelled queries made from the same records (bench/search-labels.ts) and prints the share whose expected
 * record comes first and within the first five.
 * Settings: BENCH_DUPLICATES_SEED (65) and BENCH_DUPLICATES_COMPANIES (600), or BENCH_DUPLICATES_FILE (a set
 * written by `npm run bench:duplicates-set`); BENCH_DUPLICATES_BACKGROUND (0): contacts written straight into
 * the database before the set (a fifth as many companies), so the set is looked up among them;
 * BENCH_DUPLICATES_BASE_DIR: a checkout holding the build before (`dist/`), measured in the same run on a
 * database of its own with the same set and background.
 */
const ROOT = join(__dirname, '..', '..');
const SEED = Number(process.env.BENCH_DUPLICATES_SEED ?? 65);
const COMPANIES = Number(process.env.BENCH_DUPLICATES_COMPANIES ?? 600);
const FILE = process.env.BENCH_DUPLICATES_FILE || undefined;
const BACKGROUND = Number(process.env.BENCH_DUPLICATES_BACKGROUND ?? 0);
const BASE_DIR = process.env.BENCH_DUPLICATES_BASE_DIR || undefined;

/** Background rows: made-up surnames and stems (8,000 of them), half with a phone, two in three at a company. */
async function seedBackground(databaseUrl: string): Promise<void> {
  if (!BACKGROUND) return;
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    // The search triggers and expression indexes call the schema's functions by name.
    await pg.query(`SET search_path TO contacts, public`);
    const companies = Math.max(1, Math.round(BACKGROUND / 5));
    const h = `(hashint4(g)::bigint & 2147483647)`;
    await insertCompanies(pg, companies, 'example');
    await pg.query(
      `INSERT INTO contacts.contacts (id, email, first_name, last_name, phone, stage, source, company_id, created_at, updated_at)
       SELECT ${idOf('cont', 'g')}, 'bg' || g || '@' || CASE WHEN g % 3 <> 0 THEN 'co' || (1 + g % $2) || '.example' ELSE 'mail' || (g % 50) || '.example' END,
              (${FIRST})[1 + g % 20], ${stem(h)},
              CASE WHEN g % 2 = 0 THEN '+1 555 ' || lpad(((g::bigint * 7919) % 10000000)::text, 7, '0') END,
              'lead', 'organic', CASE WHEN g % 3 <> 0 THEN ${idOf('comp', `1 + g % $2`)} END, now(), now()
       FROM generate_series(1, $1) g`,
      [BACKGROUND, companies],
    );
    await pg.query(`ANALYZE contacts.contacts`);
    await pg.query(`ANALYZE contacts.companies`);
  } finally {
    await pg.end();
  }
}

/** This tree's commit, or `working tree` for a copy outside git. */
const build = () => {
  try {
    return thisBuild();
  } catch {
    return 'working tree';
  }
};

const caller =
  (stack: BenchStack): ApiCall =>
  async (method, path, body) => {
    const res = await fetch(`${stack.api}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': stack.key },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };

async function measureBuild(root: string, label: string, set: LabelledSet): Promise<string> {
  const stack = await startBenchStack(root, { apps: ['contacts', 'gateway'] });
  try {
    const started = Date.now();
    await seedBackground(stack.databaseUrl);
    const seeded = Date.now();
    const call = caller(stack);
    const ids = await loadLabelledSet(call, set);
    const loaded = Date.now();
    const answers = await askEveryRecord(call, set, ids);
    process.stderr.write(
      `${label}: background ${BACKGROUND} contacts in ${Math.round((seeded - started) / 1000)} s, set loaded in ${Math.round((loaded - seeded) / 1000)} s, ${answers.length} look-ups in ${Math.round((Date.now() - loaded) / 1000)} s\n`,
    );
    // GET /search on the same records: queries a person would type, and whether the expected record comes first.
    const search = await askSearch(call, labelledQueries(set, ids));
    return `${qualityTable(measure(set, ids, answers), label)}\n\n${searchTable(search, label)}`;
  } finally {
    await stack.stop();
  }
}

runBenchmark(async () => {
  const set: LabelledSet = FILE
    ? JSON.parse(readFileSync(FILE, 'utf8'))
    : generateDuplicatesSet(SEED, COMPANIES, require(join(__dirname, '..', 'apps', 'contacts', 'src', 'search', 'duplicate-nicknames.js')).NICKNAME_GROUPS);
  const header = `${machine()}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ' ',
    )}; set ${FILE ?? `seed ${SEED}, ${COMPANIES} companies`}: ${set.contacts.length} contacts, ${set.companies.length} companies; background ${BACKGROUND} contacts`;
  process.stdout.write(`${header}\n\n`);
  // Each build's tables as soon as they are measured.
  if (BASE_DIR) process.stdout.write(`${await measureBuild(BASE_DIR, 'before', set)}\n\n`);
  process.stdout.write(`${await measureBuild(ROOT, `this (${build()})`, set)}\n`);
});
