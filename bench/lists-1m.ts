import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { join } from 'path';
import { Client } from 'pg';
import { machine, percentile, runBenchmark } from './bench-stack';

/**
 * Every list endpoint and filter at scale: seeds 1,000,000 contacts, 20,000 companies, 200,000 deals,
 * 100,000 activities and 100,000 tasks straight into the tables of a throw-away database (through the
 * API it would take hours, and the seed is not what is measured), then times each list request through
 * the gateway, one at a time. Common filter values and rare ones both: a keyset page ordered by id with
 * a filter few rows match is the case an index has to serve. `npm run bench:lists`.
 * Settings: BENCH_CONTACTS, BENCH_DEALS, BENCH_LIST_SAMPLES.
 */
const ROOT = join(__dirname, '..', '..');
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const DEALS = Number(process.env.BENCH_DEALS ?? 200_000);
const SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 100);

/** Ids the services accept (`<prefix>_` and 26 characters of the id alphabet), in insertion order. */
const idOf = (prefix: string, n: string) => `'${prefix}_' || lpad(to_hex(${n}), 26, '0')`;

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await fetch(url).catch(() => undefined))?.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become healthy`);
}

async function seed(pg: Client, stages: { a: string[]; b: string[]; pipelineA: string; pipelineB: string }): Promise<void> {
  const span = `interval '730 days'`;
  await pg.query(`INSERT INTO contacts.users (id, name, email) SELECT ${idOf('user', 'g')}, 'User ' || g, 'user' || g || '@bench.example' FROM generate_series(1, 50) g`);
  await pg.query(
    `INSERT INTO contacts.companies (id, name, domain, industry)
     SELECT ${idOf('comp', 'g')}, (ARRAY['Acme','Globex','Initech','Umbrella','Hooli'])[1 + g % 5] || ' ' || g, 'company' || g || '.example', 'software'
     FROM generate_series(1, 20000) g`,
  );
  // Time-ordered like real ids: created_at rises with the id over two years. One in ten has an owner,
  // one in three a company, one in five a score; a few rows carry a rare stage, source, owner or score.
  await pg.query(
    `INSERT INTO contacts.contacts (id, email, first_name, last_name, stage, source, company_id, owner_id, icp_score, icp_scored_at, created_at, updated_at)
     SELECT ${idOf('cont', 'g')},
            'person' || g || '@' || (ARRAY['acme.com','globex.io','initech.net','umbrella.org'])[1 + g % 4],
            (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Margaret','Ken','Dennis','Frances'])[1 + g % 10],
            (ARRAY['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Hamilton','Thompson','Ritchie','Allen'])[1 + (g / 10) % 10] || g,
            CASE WHEN g % 100000 = 7 THEN 'churned' ELSE (ARRAY['lead','prospect','customer'])[1 + g % 3] END,
            CASE WHEN g % 100000 = 11 THEN 'social' ELSE (ARRAY['organic','referral','paid','email','event','outbound'])[1 + g % 6] END,
            CASE WHEN g % 3 = 0 THEN ${idOf('comp', '1 + g % 20000')} END,
            CASE WHEN g % 200000 = 13 THEN ${idOf('user', '50')} WHEN g % 10 = 0 THEN ${idOf('user', '1 + g % 49')} END,
            CASE WHEN g % 100000 = 17 THEN 100 WHEN g % 5 = 0 THEN g % 96 END,
            CASE WHEN g % 5 = 0 THEN now() - ${span} + (g::float8 / $1) * ${span} END,
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span}
     FROM generate_series(1, $1) g`,
    [CONTACTS],
  );
  // Deals spread over two pipelines of four stages; values up to 1,000,000.00, a few far above; half
  // with an activity date.
  await pg.query(
    `INSERT INTO deals.deals (id, name, pipeline_id, stage_id, contact_id, company_id, value, status, owner_id, last_activity_at, stage_entered_at, created_at, updated_at)
     SELECT ${idOf('deal', 'g')}, 'Deal ' || g,
            CASE WHEN g % 2 = 0 THEN $2 ELSE $3 END,
            CASE WHEN g % 2 = 0 THEN ($4::text[])[1 + (g / 2) % 4] ELSE ($5::text[])[1 + (g / 2) % 4] END,
            ${idOf('cont', '1 + (g * 7) % $6')},
            CASE WHEN g % 4 = 0 THEN ${idOf('comp', '1 + g % 20000')} END,
            CASE WHEN g % 100000 = 3 THEN 900000000000 ELSE (g * 7919) % 100000000 END,
            (ARRAY['open','open','won','lost'])[1 + (g / 2) % 4],
            CASE WHEN g % 5 = 0 THEN ${idOf('user', '1 + g % 49')} END,
            CASE WHEN g % 2 = 0 THEN now() - (g % 400) * interval '1 day' END,
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span}
     FROM generate_series(1, $1) g`,
    [DEALS, stages.pipelineA, stages.pipelineB, stages.a, stages.b, CONTACTS],
  );
  // Each deal's placement in its first stage, as a created deal has.
  await pg.query(
    `INSERT INTO deals.stage_history (id, deal_id, to_stage_id, changed_at, changed_by)
     SELECT ${idOf('sh', 'g')}, d.id, d.stage_id, d.created_at, 'user_00000000000000000000000000'
     FROM (SELECT id, stage_id, created_at, row_number() OVER (ORDER BY id) AS g FROM deals.deals) d`,
  );
  await pg.query(
    `INSERT INTO contacts.activities (id, type, status, subject, occurred_at, contact_id, deal_id, created_at, updated_at)
     SELECT ${idOf('act', 'g')}, (ARRAY['email','call','meeting','note'])[1 + g % 4], CASE WHEN g % 50000 = 5 THEN 'cancelled' ELSE 'completed' END,
            'Activity ' || g, now() - (g % 700) * interval '1 day', ${idOf('cont', '1 + (g * 13) % $1')}, ${idOf('deal', '1 + (g * 3) % $2')}, now(), now()
     FROM generate_series(1, 100000) g`,
    [CONTACTS, DEALS],
  );
  await pg.query(
    `INSERT INTO contacts.tasks (id, title, priority, status, due_at, contact_id, deal_id, owner_id, created_at, updated_at)
     SELECT ${idOf('task', 'g')}, 'Task ' || g, (ARRAY['low','medium','high'])[1 + g % 3], CASE WHEN g % 50000 = 5 THEN 'cancelled' ELSE 'pending' END,
            now() + (g % 30) * interval '1 day', ${idOf('cont', '1 + (g * 17) % $1')}, ${idOf('deal', '1 + (g * 5) % $2')}, ${idOf('user', '1 + g % 49')}, now(), now()
     FROM generate_series(1, 100000) g`,
    [CONTACTS, DEALS],
  );
  for (const table of ['contacts.users', 'contacts.companies', 'contacts.contacts', 'contacts.activities', 'contacts.tasks', 'deals.deals', 'deals.stage_history']) await pg.query(`ANALYZE ${table}`);
}

async function main(): Promise<void> {
  const namespace = `benchlists${randomBytes(3).toString('hex')}`;
  const db = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm');
  db.pathname = `/crm_${namespace}`;
  const key = `crm_live_${randomBytes(24).toString('hex').slice(0, 32)}`;
  const port = 3700 + Math.floor(Math.random() * 90) * 5;
  const env = { ...process.env, DATABASE_URL: db.toString(), CRM_NAMESPACE: namespace, CRM_BOOTSTRAP_API_KEY: key, HOST: '127.0.0.1', HEALTH_HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000', RPC_TIMEOUT_MS: '30000' };
  const children: ChildProcess[] = [];
  const start = (app: string, extra: Record<string, string>) =>
    children.push(spawn(process.execPath, [join(ROOT, 'dist', 'apps', app, 'src', 'main.js')], { env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] }));
  const admin = new URL(db.toString());
  admin.pathname = '/postgres';
  const api = `http://127.0.0.1:${port}`;
  const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
  try {
    start('contacts', { HEALTH_PORT: String(port + 1) });
    await waitFor(`http://127.0.0.1:${port + 1}/health`);
    start('deals', { HEALTH_PORT: String(port + 2) });
    start('gateway', { PORT: String(port) });
    await waitFor(`http://127.0.0.1:${port + 2}/health`);
    await waitFor(`${api}/metrics`);
    const pipeline = async (name: string) => {
      const res = await fetch(`${api}/pipelines`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name, stages: ['New', 'Qualified', 'Won', 'Lost'].map((n, i) => ({ name: n, type: i === 2 ? 'won' : i === 3 ? 'lost' : 'open' })) }),
      });
      return ((await res.json()) as { data: { id: string; stages: Array<{ id: string }> } }).data;
    };
    const [a, b] = [await pipeline('Sales'), await pipeline('Renewals')];
    const pg = new Client({ connectionString: db.toString() });
    await pg.connect();
    const seeded = Date.now();
    try {
      await seed(pg, { a: a.stages.map((s) => s.id), b: b.stages.map((s) => s.id), pipelineA: a.id, pipelineB: b.id });
    } finally {
      await pg.end();
    }
    const seedSeconds = Math.round((Date.now() - seeded) / 1000);

    const contact = (n: number) => `cont_${n.toString(16).padStart(26, '0')}`;
    const deal = (n: number) => `deal_${n.toString(16).padStart(26, '0')}`;
    const user = (n: number) => `user_${n.toString(16).padStart(26, '0')}`;
    const company = (n: number) => `comp_${n.toString(16).padStart(26, '0')}`;
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    // A cursor deep in the list: the page after the contact in the middle.
    const deepCursor = async (path: string) => {
      let cursor: string | undefined;
      for (let i = 0; i < 3; i++) {
        const page = (await (await fetch(`${api}${path}${path.includes('?') ? '&' : '?'}limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers })).json()) as { next_cursor: string };
        cursor = page.next_cursor;
      }
      return cursor!;
    };
    const scenarios: Array<[string, string]> = [
      ['contacts, first page', '/contacts'],
      ['contacts, fourth page of 200', `/contacts?cursor=${await deepCursor('/contacts')}`],
      ['contacts, stage (a third match)', '/contacts?stage=customer'],
      ['contacts, stage (10 match)', '/contacts?stage=churned'],
      ['contacts, source (a sixth match)', '/contacts?source=referral'],
      ['contacts, source (10 match)', '/contacts?source=social'],
      ['contacts, company_id', `/contacts?company_id=${company(301)}`],
      ['contacts, owner_id (one in ten)', `/contacts?owner_id=${user(7)}`],
      ['contacts, owner_id (5 match)', `/contacts?owner_id=${user(50)}`],
      ['contacts, icp_score_min=90', '/contacts?icp_score_min=90'],
      ['contacts, icp_score_min=100 (10 match)', '/contacts?icp_score_min=100'],
      ['contacts, icp_score_max=5', '/contacts?icp_score_max=5'],
      ['contacts, icp_scored_after (last 30 days)', `/contacts?icp_scored_after=${daysAgo(30)}`],
      ['contacts, icp_scored_before (first 30 days)', `/contacts?icp_scored_before=${daysAgo(700)}`],
      ['contacts, created_after (last day)', `/contacts?created_after=${daysAgo(1)}`],
      ['contacts, created_before (first day)', `/contacts?created_before=${daysAgo(729)}`],
      ['contacts, created in one week a year ago', `/contacts?created_after=${daysAgo(365)}&created_before=${daysAgo(358)}`],
      ['contacts, stage + source', '/contacts?stage=lead&source=email'],
      ['contacts, search by name', '/contacts?search=grace'],
      ['contacts, search one person by email', `/contacts?search=person${Math.floor(CONTACTS / 2)}@`],
      ['contacts, search one person by last name', `/contacts?search=Turing${Math.floor(CONTACTS / 300) * 100 + 22}`],
      ['contacts, search with no match', '/contacts?search=zqxv'],
      ['contacts, stage + search', '/contacts?stage=prospect&search=hopper'],
      ["a contact's deals", `/contacts/${contact(7)}/deals`],
      ["a contact's activities", `/contacts/${contact(13)}/activities`],
      ["a contact's tasks", `/contacts/${contact(17)}/tasks`],
      ['companies', '/companies'],
      ['companies, search', '/companies?search=globex'],
      ['companies, domain', '/companies?domain=company777.example'],
      ['users', '/users'],
      ['activities', '/activities'],
      ['activities, type', '/activities?type=call'],
      ['activities, status (2 match)', '/activities?status=cancelled'],
      ['activities, deal_id', `/activities?deal_id=${deal(3)}`],
      ['tasks', '/tasks'],
      ['tasks, status (2 match)', '/tasks?status=cancelled'],
      ['tasks, owner_id + priority', `/tasks?owner_id=${user(3)}&priority=high`],
      ['deals, first page', '/deals'],
      ['deals, fourth page of 200', `/deals?cursor=${await deepCursor('/deals')}`],
      ['deals, status', '/deals?status=won'],
      ['deals, pipeline_id', `/deals?pipeline_id=${a.id}`],
      ['deals, stage_id', `/deals?stage_id=${b.stages[1].id}`],
      ['deals, contact_id', `/deals?contact_id=${contact(7)}`],
      ['deals, company_id', `/deals?company_id=${company(5)}`],
      ['deals, owner_id', `/deals?owner_id=${user(5)}`],
      ['deals, min_value (most match)', '/deals?min_value=1000'],
      ['deals, min_value (2 match)', '/deals?min_value=500000000000'],
      ['deals, max_value (few match)', '/deals?max_value=10000'],
      ['deals, days_since_activity_gt=365', '/deals?days_since_activity_gt=365'],
      ['deals, created_after (last day)', `/deals?created_after=${daysAgo(1)}`],
      ['deals, status + pipeline + value', `/deals?status=open&pipeline_id=${b.id}&min_value=50000000`],
      ["a pipeline's deals, stage", `/pipelines/${a.id}/deals?stage_id=${a.stages[2].id}`],
      ['pipelines', '/pipelines'],
      ["a deal's history", `/deals/${deal(8)}/history`],
      ["a deal's activities", `/deals/${deal(3)}/activities`],
      ["a deal's tasks", `/deals/${deal(6)}/tasks`],
    ];
    const rows: string[] = [];
    for (const [label, path] of scenarios) {
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const started = performance.now();
        const res = await fetch(`${api}${path}`, { headers });
        const body = (await res.json()) as { data: unknown[] };
        times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body)}`);
        count = body.data.length;
      }
      const p99 = percentile(times, 99);
      rows.push(`| ${label} | \`${path.replace(/cursor=[^&]+/, 'cursor=…')}\` | ${count} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${p99.toFixed(1)}${p99 >= 50 ? ' ⚠' : ''} |`);
    }
    process.stdout.write(
      [
        `Run ${new Date().toISOString()} on ${machine()}; ${CONTACTS} contacts, ${DEALS} deals, 100000 activities and tasks seeded in ${seedSeconds} s; ${SAMPLES} sequential requests each through the gateway.`,
        '',
        '| List | request | items | p50 ms | p95 ms | p99 ms |',
        '|---|---|---:|---:|---:|---:|',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    const pg = new Client({ connectionString: admin.toString() });
    await pg.connect();
    await pg.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await pg.end();
  }
}

runBenchmark(main);
