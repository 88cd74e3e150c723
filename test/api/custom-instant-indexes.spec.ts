import { Client } from 'pg';
import { startStack, TestStack } from '../support/stack';

/**
 * Every custom date-time field gets an expression index over custom_instant(<column>->'<name>'), built
 * CONCURRENTLY after its definition commits, moved on rename, dropped on removal, rebuilt when a build was
 * left INVALID, and made at start for fields that have none (docs/query.md, "Indexes"). Builds happen in the
 * background, so each check waits for the catalog to show the expected state.
 */
describe('Indexes of custom date-time fields', () => {
  let stack: TestStack;
  let db: Client;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], emptyDatabase: true });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    await db.query(`SET search_path = contacts, public`);
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  interface IndexState {
    oid: number;
    valid: boolean;
    definition: string;
  }
  async function index(name: string): Promise<IndexState | undefined> {
    const { rows } = await db.query(
      `SELECT c.oid::int AS oid, i.indisvalid AS valid, pg_get_indexdef(c.oid) AS definition
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = $1 AND c.relnamespace = 'contacts'::regnamespace`,
      [name],
    );
    return rows[0];
  }
  /** Polls the catalog until `ready` holds; the deadline only bounds a failure. */
  async function until<T>(what: string, read: () => Promise<T>, ready: (value: T) => boolean, deadlineMs = 60_000): Promise<T> {
    const end = Date.now() + deadlineMs;
    for (;;) {
      const value = await read();
      if (ready(value)) return value;
      if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(value)} after ${deadlineMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const built = (name: string) =>
    until(
      `${name} built`,
      () => index(name),
      (i) => i?.valid === true,
    );
  const gone = (name: string) =>
    until(
      `${name} dropped`,
      () => index(name),
      (i) => i === undefined,
    );
  async function ok(method: 'post' | 'patch' | 'delete', path: string, body?: unknown): Promise<void> {
    const res = await stack.api.request(method.toUpperCase(), path, body);
    if (res.status >= 300) throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}: ${res.text}`);
  }

  it('builds one when a date-time field is added, moves it on rename and drops it on removal', async () => {
    await ok('post', '/objects/contacts/fields', { name: 'renewal_at', type: 'datetime' });
    const first = await built('contacts_cf_renewal_at_instant');
    expect(first!.definition).toContain(`(custom_instant((custom_fields -> 'renewal_at'::text)))`);
    // Other types are served by the GIN index alone.
    await ok('post', '/objects/contacts/fields', { name: 'renewal_day', type: 'date' });

    await ok('patch', '/objects/contacts/fields/renewal_at', { name: 'renews_at' });
    const moved = await built('contacts_cf_renews_at_instant');
    expect(moved!.definition).toContain(`(custom_fields -> 'renews_at'::text)`);
    await gone('contacts_cf_renewal_at_instant');

    await ok('delete', '/objects/contacts/fields/renews_at');
    await gone('contacts_cf_renews_at_instant');
    const { rows } = await db.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'contacts' AND indexname LIKE '%renew%'`);
    expect(rows).toEqual([]);
  });

  it("on a custom object, builds a partial index over the object's records and follows the field", async () => {
    const res = await stack.api.post('/objects', { name: 'Visit', slug: 'visits', fields: [{ name: 'starts_at', type: 'datetime' }] });
    expect(res.status).toBe(201);
    const typeId: string = res.body.data.id;
    const definitionOf = (field: string) =>
      until(
        `visits.${field} index built`,
        async () =>
          (
            await db.query(
              `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relnamespace = 'contacts'::regnamespace AND i.indisvalid AND c.relname LIKE 'object_records\\_cf\\_%'
                  AND pg_get_indexdef(c.oid) LIKE '%' || $1 || '%'`,
              [`'${field}'::text`],
            )
          ).rows as Array<{ name: string; definition: string }>,
        (rows) => rows.length === 1,
      );
    const [first] = await definitionOf('starts_at');
    expect(first.definition).toContain(`custom_instant(("values" -> 'starts_at'::text))`);
    expect(first.definition).toContain(`WHERE (object_type_id = '${typeId}'::text)`);
    await ok('patch', '/objects/visits/fields/starts_at', { name: 'begins_at' });
    const [moved] = await definitionOf('begins_at');
    await gone(first.name);
    await ok('delete', '/objects/visits/fields/begins_at');
    await gone(moved.name);
  });

  it('names a field too long for a plain name uniquely, within 63 bytes', async () => {
    const long = (end: string) => `${'x'.repeat(60)}_${end}`;
    await ok('post', '/objects/contacts/fields', { name: long('a'), type: 'datetime' });
    await ok('post', '/objects/contacts/fields', { name: long('b'), type: 'datetime' });
    const named = await until(
      'both long-named indexes built',
      async () =>
        (
          await db.query(
            `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE c.relnamespace = 'contacts'::regnamespace AND i.indisvalid AND pg_get_indexdef(c.oid) LIKE '%custom_instant((custom_fields -> ''xxxx%'`,
          )
        ).rows.map((r: { name: string }) => r.name),
      (names) => names.length === 2,
    );
    for (const name of named) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    await ok('delete', `/objects/contacts/fields/${long('a')}`);
    await ok('delete', `/objects/contacts/fields/${long('b')}`);
    for (const name of named) await gone(name);
  });

  it('at start, builds the missing ones and rebuilds one a failed build left INVALID', async () => {
    await ok('post', '/objects/contacts/fields', { name: 'signed_at', type: 'datetime' });
    await ok('post', '/objects/contacts/fields', { name: 'churned_at', type: 'datetime' });
    const signed = await built('contacts_cf_signed_at_instant');
    await built('contacts_cf_churned_at_instant');
    await stack.stopService('contacts');
    // As an older release left things: no index for one field, and an interrupted build for the other.
    await db.query(`DROP INDEX contacts_cf_churned_at_instant`);
    await db.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1`, [signed!.oid]);
    await stack.startService('contacts');
    const rebuilt = await until(
      'signed_at rebuilt',
      () => index('contacts_cf_signed_at_instant'),
      (i) => i?.valid === true && i.oid !== signed!.oid,
    );
    expect(rebuilt!.definition).toContain(`(custom_fields -> 'signed_at'::text)`);
    await built('contacts_cf_churned_at_instant');
  });

  it('serves a range on the field from the index at 20,000 contacts', async () => {
    await ok('post', '/objects/contacts/fields', { name: 'visit_at', type: 'datetime' });
    await built('contacts_cf_visit_at_instant');
    // One contact in 400 visited in 2020; the others later, written with assorted offsets.
    await db.query(
      `INSERT INTO contacts (id, email, custom_fields)
       SELECT 'con_idx' || lpad(n::text, 6, '0'), 'idx' || n || '@example.com',
              jsonb_build_object('visit_at', CASE WHEN n % 400 = 0 THEN '2020-06-01T10:00:00+02:00'
                                                  ELSE to_char(timestamp '2024-01-01' + n * interval '17 minutes', 'YYYY-MM-DD"T"HH24:MI:SS') || '-05:00' END)
         FROM generate_series(1, 20000) n`,
    );
    await db.query(`ANALYZE contacts`);
    // The WHERE and ORDER BY the query catalog writes for custom_fields.visit_at (query-catalog.ts, customFields).
    const plan = await db.query(
      `EXPLAIN (FORMAT JSON) SELECT c.id FROM contacts c
        WHERE custom_instant(c.custom_fields->'visit_at') < $1::timestamptz
        ORDER BY custom_instant(c.custom_fields->'visit_at') ASC NULLS LAST, c.id ASC LIMIT 51`,
      ['2021-01-01T00:00:00Z'],
    );
    const scans: Array<{ type: string; index?: string }> = [];
    const walk = (node: Record<string, unknown>) => {
      scans.push({ type: node['Node Type'] as string, index: node['Index Name'] as string | undefined });
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk(plan.rows[0]['QUERY PLAN'][0].Plan);
    expect(scans.filter((s) => s.index === 'contacts_cf_visit_at_instant').map((s) => s.type)).toEqual([expect.stringMatching(/Index Scan$/)]);
    expect(scans.map((s) => s.type)).not.toContain('Seq Scan');

    // And the service's own query reads it: the index's scan count moves once the statistics are flushed.
    const scanned = async () =>
      Number((await db.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'contacts_cf_visit_at_instant'`)).rows[0].idx_scan);
    const before = await scanned();
    const res = await stack.api.post('/contacts/query', {
      filter: { 'custom_fields.visit_at': { $lt: '2021-01-01T00:00:00Z' } },
      sort: [{ field: 'custom_fields.visit_at', direction: 'asc' }],
      limit: 100,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(50);
    await until('the query scanned the index', scanned, (count) => count > before);
  });
});
