import { instantIndexName } from '@crm/records';
import { Client } from 'pg';
import { BenchApp, BenchStack, KEPT_DATABASE, SEEDED_DEALS_ENV, withBenchStack } from './bench-stack';

/**
 * The data set of `npm run bench:lists` and `npm run bench:query`: 1,000,000 contacts, 20,000 companies,
 * 50 users, 200,000 deals in two pipelines, 100,000 activities and 100,000 tasks, with custom field values
 * on contacts and deals, written straight into the tables of a throw-away database (through the API it
 * would take hours, and the seed is not what is measured). The seed produces no events. The indexes the
 * services build for custom date-time fields (custom-instant-indexes.ts) are waited for, valid, before the
 * tables are analysed and the work starts.
 * Settings: BENCH_CONTACTS, BENCH_DEALS; BENCH_DATABASE=<name> keeps the seeded database (crm_bench_<name>)
 * and reuses it when it already holds the seed (drop it when done).
 */
export const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
export const DEALS = Number(process.env.BENCH_DEALS ?? 200_000);
export const COMPANIES = 20_000;
export const WORK_ITEMS = 100_000;

/** Ids of seeded rows, as the seed writes them: the n-th row of a kind, in insertion order. */
const seededId = (prefix: string) => (n: number) => `${prefix}_${n.toString(16).padStart(26, '0')}`;
export const contactId = seededId('cont');
export const dealId = seededId('deal');
export const userId = seededId('user');
export const companyId = seededId('comp');

/** The same ids in SQL: `<prefix>_` and 26 characters of the id alphabet. */
const idOf = (prefix: string, n: string) => `'${prefix}_' || lpad(to_hex(${n}), 26, '0')`;

/** Custom fields defined through the API before the seed, and the values the seed gives them. */
export const CUSTOM_FIELDS = {
  contacts: [
    { name: 'region', label: 'Region', type: 'enum', enum_values: ['amer', 'emea', 'apac', 'latam'] },
    { name: 'renews_at', label: 'Renews at', type: 'datetime' },
  ],
  deals: [
    { name: 'tier', label: 'Tier', type: 'enum', enum_values: ['smb', 'mid_market', 'enterprise', 'strategic'] },
    { name: 'seats', label: 'Seats', type: 'number' },
  ],
} as const;

/** Custom date-time fields of the seed, as the tables and names their indexes are built for. */
const INSTANT_INDEXES = Object.entries(CUSTOM_FIELDS).flatMap(([table, fields]) =>
  fields.flatMap((f) => (f.type === 'datetime' ? [{ schema: table, name: instantIndexName({ table, column: 'custom_fields', field: f.name }) }] : [])),
);

/** Where contacts' `renews_at` falls: from two years before the seed to one year after, in no order of ids. */
const RENEWS_AT_SPAN_DAYS = 1095;
const RENEWS_AT_FROM_DAYS_AGO = 730;

export interface SeededPipeline {
  id: string;
  stages: Array<{ id: string; name: string; type: string }>;
}

export interface SeededStack {
  stack: BenchStack;
  /** `Sales` and `Renewals`, four stages each: New, Qualified (open), Won, Lost. */
  pipelines: { a: SeededPipeline; b: SeededPipeline };
  seedSeconds: number;
}

async function seed(pg: Client, stages: { a: string[]; b: string[]; pipelineA: string; pipelineB: string }): Promise<void> {
  const span = `interval '730 days'`;
  await pg.query(
    `INSERT INTO contacts.users (id, name, email) SELECT ${idOf('user', 'g')}, 'User ' || g, 'user' || g || '@bench.example' FROM generate_series(1, 50) g`,
  );
  await pg.query(
    `INSERT INTO contacts.companies (id, name, domain, industry)
     SELECT ${idOf('comp', 'g')}, (ARRAY['Acme','Globex','Initech','Umbrella','Hooli'])[1 + g % 5] || ' ' || g, 'company' || g || '.example', 'software'
     FROM generate_series(1, ${COMPANIES}) g`,
  );
  // Time-ordered like real ids: created_at rises with the id over two years. One in ten has an owner,
  // one in three a company, one in five a score; a few rows carry a rare stage, source, owner or score.
  // Nine in ten have a region (custom field), spread evenly over its four values. A renewal date-time
  // (custom field renews_at) scattered over three years regardless of the id, written as RFC 3339 text in
  // four offsets (Z, +01:00, -05:00, +05:30), one in seven with milliseconds; one in 25 has none, one in 100
  // a JSON null and one in 100 a malformed value (no offset, no T, 30 February, a word, a number), which
  // custom_instant reads as null.
  await pg.query(
    `INSERT INTO contacts.contacts (id, email, first_name, last_name, stage, source, company_id, owner_id, icp_score, icp_scored_at, custom_fields, created_at, updated_at)
     SELECT ${idOf('cont', 'g')},
            'person' || g || '@' || (ARRAY['acme.com','globex.io','initech.net','umbrella.org'])[1 + g % 4],
            (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Margaret','Ken','Dennis','Frances'])[1 + g % 10],
            (ARRAY['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Hamilton','Thompson','Ritchie','Allen'])[1 + (g / 10) % 10] || g,
            CASE WHEN g % 100000 = 7 THEN 'churned' ELSE (ARRAY['lead','prospect','customer'])[1 + g % 3] END,
            CASE WHEN g % 100000 = 11 THEN 'social' ELSE (ARRAY['organic','referral','paid','email','event','outbound'])[1 + g % 6] END,
            CASE WHEN g % 3 = 0 THEN ${idOf('comp', `1 + g % ${COMPANIES}`)} END,
            CASE WHEN g % 200000 = 13 THEN ${idOf('user', '50')} WHEN g % 10 = 0 THEN ${idOf('user', '1 + g % 49')} END,
            CASE WHEN g % 100000 = 17 THEN 100 WHEN g % 5 = 0 THEN g % 96 END,
            CASE WHEN g % 5 = 0 THEN now() - ${span} + (g::float8 / $1) * ${span} END,
            CASE WHEN g % 10 = 9 THEN '{}'::jsonb ELSE jsonb_build_object('region', (ARRAY['amer','emea','apac','latam'])[1 + (g / 3) % 4]) END
              || CASE WHEN g % 25 = 3 THEN '{}'::jsonb ELSE jsonb_build_object('renews_at', CASE
                   WHEN g % 100 = 66 THEN 'null'::jsonb
                   WHEN g % 100 = 41 THEN (ARRAY['"2025-06-01T10:00:00"', '"2025-06-01 10:00:00Z"', '"2025-02-30T10:00:00Z"', '"soon"', '20250601'])[1 + (g / 100) % 5]::jsonb
                   ELSE to_jsonb(
                     to_char(r.at + r.shift, CASE WHEN g % 7 = 0 THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS' ELSE 'YYYY-MM-DD"T"HH24:MI:SS' END)
                     || (ARRAY['Z', '+01:00', '-05:00', '+05:30'])[1 + g % 4])
                 END) END,
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span}
     FROM generate_series(1, $1) g,
          -- The instant as UTC wall time, and the offset it is written in.
          LATERAL (SELECT date_trunc('milliseconds', (now() AT TIME ZONE 'UTC') - interval '${RENEWS_AT_FROM_DAYS_AGO} days'
                            + (hashint4(g)::float8 + 2147483648) / 4294967296 * interval '${RENEWS_AT_SPAN_DAYS} days') AS at,
                          (ARRAY[interval '0', interval '1 hour', interval '-5 hours', interval '5 hours 30 minutes'])[1 + g % 4] AS shift) r`,
    [CONTACTS],
  );
  // Deals spread over two pipelines of four stages; values up to 1,000,000.00, a few far above; half
  // with an activity date. Custom fields: a tier (one deal in a thousand 'strategic'), and seats on four
  // deals in five.
  await pg.query(
    `INSERT INTO deals.deals (id, name, pipeline_id, stage_id, contact_id, company_id, value, status, owner_id, last_activity_at, custom_fields, stage_entered_at, created_at, updated_at)
     SELECT ${idOf('deal', 'g')}, 'Deal ' || g,
            CASE WHEN g % 2 = 0 THEN $2 ELSE $3 END,
            CASE WHEN g % 2 = 0 THEN ($4::text[])[1 + (g / 2) % 4] ELSE ($5::text[])[1 + (g / 2) % 4] END,
            ${idOf('cont', '1 + (g * 7) % $6')},
            CASE WHEN g % 4 = 0 THEN ${idOf('comp', `1 + g % ${COMPANIES}`)} END,
            CASE WHEN g % 100000 = 3 THEN 900000000000 ELSE (g * 7919) % 100000000 END,
            (ARRAY['open','open','won','lost'])[1 + (g / 2) % 4],
            CASE WHEN g % 5 = 0 THEN ${idOf('user', '1 + g % 49')} END,
            CASE WHEN g % 2 = 0 THEN now() - (g % 400) * interval '1 day' END,
            jsonb_strip_nulls(jsonb_build_object(
              'tier', CASE WHEN g % 1000 = 7 THEN 'strategic' ELSE (ARRAY['smb','mid_market','enterprise'])[1 + (g / 5) % 3] END,
              'seats', CASE WHEN g % 5 <> 4 THEN 1 + (g * 37) % 500 END)),
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span},
            now() - ${span} + (g::float8 / $1) * ${span}
     FROM generate_series(1, $1) g`,
    [DEALS, stages.pipelineA, stages.pipelineB, stages.a, stages.b, CONTACTS],
  );
  // Each deal's placement in its first stage, as a created deal has. One entry per deal has no earlier entry
  // into its stage and no later stages, the columns' defaults, so the statement trigger that keeps them
  // (stage_history_flow_insert, whose checks across a 200,000-row insert did not end in 10 minutes) is off
  // for this one insert.
  await pg.query(`ALTER TABLE deals.stage_history DISABLE TRIGGER stage_history_flow_insert`);
  await pg.query(
    `INSERT INTO deals.stage_history (id, deal_id, to_stage_id, changed_at, changed_by)
     SELECT ${idOf('sh', 'g')}, d.id, d.stage_id, d.created_at, 'user_00000000000000000000000000'
     FROM (SELECT id, stage_id, created_at, row_number() OVER (ORDER BY id) AS g FROM deals.deals) d`,
  );
  await pg.query(`ALTER TABLE deals.stage_history ENABLE TRIGGER stage_history_flow_insert`);
  await pg.query(
    `INSERT INTO contacts.activities (id, type, status, subject, occurred_at, contact_id, deal_id, created_at, updated_at)
     SELECT ${idOf('act', 'g')}, (ARRAY['email','call','meeting','note'])[1 + g % 4], CASE WHEN g % 50000 = 5 THEN 'cancelled' ELSE 'completed' END,
            'Activity ' || g, now() - (g % 700) * interval '1 day', ${idOf('cont', '1 + (g * 13) % $1')}, ${idOf('deal', '1 + (g * 3) % $2')}, now(), now()
     FROM generate_series(1, ${WORK_ITEMS}) g`,
    [CONTACTS, DEALS],
  );
  await pg.query(
    `INSERT INTO contacts.tasks (id, title, priority, status, due_at, contact_id, deal_id, owner_id, created_at, updated_at)
     SELECT ${idOf('task', 'g')}, 'Task ' || g, (ARRAY['low','medium','high'])[1 + g % 3], CASE WHEN g % 50000 = 5 THEN 'cancelled' ELSE 'pending' END,
            now() + (g % 30) * interval '1 day', ${idOf('cont', '1 + (g * 17) % $1')}, ${idOf('deal', '1 + (g * 5) % $2')}, ${idOf('user', '1 + g % 49')}, now(), now()
     FROM generate_series(1, ${WORK_ITEMS}) g`,
    [CONTACTS, DEALS],
  );
  await waitForInstantIndexes(pg);
  for (const table of [
    'contacts.users',
    'contacts.companies',
    'contacts.contacts',
    'contacts.activities',
    'contacts.tasks',
    'deals.deals',
    'deals.stage_history',
  ])
    await pg.query(`ANALYZE ${table}`);
}

/**
 * Waits until the index the owning service builds for each custom date-time field of the seed exists and
 * is valid and ready, polling pg_index: its build starts in the background once the field is defined
 * (CREATE INDEX CONCURRENTLY, which also waits for the seed's writes to end), and until it is valid queries
 * on the field scan the table.
 */
export async function waitForInstantIndexes(pg: Client, timeoutMs = 15 * 60_000): Promise<void> {
  const started = Date.now();
  for (const { schema, name } of INSTANT_INDEXES) {
    for (;;) {
      const { rows } = await pg.query(
        `SELECT i.indisvalid AND i.indisready AS ready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = $1 AND c.relnamespace = $2::regnamespace`,
        [name, schema],
      );
      if (rows[0]?.ready) break;
      if (Date.now() - started > timeoutMs) throw new Error(`index ${schema}.${name} not valid after ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    process.stderr.write(`seed: index ${schema}.${name} valid after ${Math.round((Date.now() - started) / 1000)} s of waiting\n`);
  }
}

/**
 * Starts `apps` (the contacts and deals services and the gateway unless told) from `root/dist` on a database of their own,
 * creates the two pipelines and the custom field definitions through the API, seeds the data set, runs
 * `work`, and stops the stack and drops its database however `work` ends.
 */
export async function withSeededStack<T>(
  root: string,
  work: (seeded: SeededStack) => Promise<T>,
  apps: readonly BenchApp[] = ['contacts', 'deals', 'gateway'],
): Promise<T> {
  return withBenchStack(
    root,
    async (stack) => {
      const pg = new Client({ connectionString: stack.databaseUrl });
      await pg.connect();
      const started = Date.now();
      try {
        const [{ seeded }] = (await pg.query(`SELECT (SELECT count(*) FROM contacts.contacts) >= $1 AS seeded`, [CONTACTS])).rows;
        if (KEPT_DATABASE && seeded) {
          // An earlier run's stale sweep may have rewritten its deals: index-only scans need the visibility map back.
          await pg.query(`VACUUM ANALYZE deals.deals`);
          await waitForInstantIndexes(pg);
          const res = await fetch(`${stack.api}/pipelines?limit=2`, { headers: { 'X-Api-Key': stack.key } });
          const [a, b] = ((await res.json()) as { data: SeededPipeline[] }).data;
          return await work({ stack, pipelines: { a, b }, seedSeconds: 0 });
        }
        const pipeline = (name: string): Promise<SeededPipeline> =>
          stack.post('/pipelines', {
            name,
            stages: ['New', 'Qualified', 'Won', 'Lost'].map((n, i) => ({ name: n, type: i === 2 ? 'won' : i === 3 ? 'lost' : 'open' })),
          });
        const [a, b] = [await pipeline('Sales'), await pipeline('Renewals')];
        for (const [object, fields] of Object.entries(CUSTOM_FIELDS)) for (const field of fields) await stack.post(`/objects/${object}/fields`, field);
        await seed(pg, { a: a.stages.map((s) => s.id), b: b.stages.map((s) => s.id), pipelineA: a.id, pipelineB: b.id });
        return await work({ stack, pipelines: { a, b }, seedSeconds: Math.round((Date.now() - started) / 1000) });
      } finally {
        await pg.end();
      }
    },
    // A deep list or a slow query answers within the RPC deadline rather than as a 503.
    { apps, env: { RPC_TIMEOUT_MS: '30000', ...SEEDED_DEALS_ENV } },
  );
}
