import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * Unique custom field checks are lookups in the GIN indexes of the stored values, not scans of the
 * records: PostgreSQL's own statistics show each index read by a batch that checks unique values. The
 * tables hold enough rows that reading them through the index is the only plan worth choosing.
 */
describe('unique custom field checks', () => {
  let stack: TestStack;
  let db: Client;
  const ROWS = 4000;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  const statuses = (res: { body: { data: Array<{ status: number }> } }) => res.body.data.map((r) => r.status);

  /** How often each index has been scanned, as the statistics last flushed by the services' sessions say. */
  async function scans(indexes: string[]): Promise<Record<string, number>> {
    const { rows } = await db.query(`SELECT indexrelname AS name, idx_scan::int AS n FROM pg_stat_user_indexes WHERE indexrelname = ANY($1)`, [indexes]);
    expect(rows).toHaveLength(indexes.length);
    return Object.fromEntries(rows.map((r: { name: string; n: number }) => [r.name, r.n]));
  }

  /** How often the table has been read whole (sequential scans), as the statistics last flushed say. */
  async function tableScans(table: string): Promise<number> {
    const [schema, name] = table.split('.');
    const { rows } = await db.query(`SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2`, [schema, name]);
    return rows[0].n;
  }

  /** Resolves once every index in `before` has been scanned since; fails if one never is. */
  const scannedSince = (before: Record<string, number>) =>
    eventually(async () => {
      const now = await scans(Object.keys(before));
      return Object.keys(before).every((name) => now[name] > before[name]) ? now : undefined;
    }, 60_000);

  it('checks a custom object batch against the values index, and emails against their lower-cased form', async () => {
    const created = await stack.api.post('/objects', {
      name: 'Account',
      slug: 'account',
      fields: [
        { name: 'code', type: 'string', unique: true },
        { name: 'billing_email', type: 'email', unique: true },
      ],
    });
    expect(created.status).toBe(201);
    await db.query(
      `INSERT INTO contacts.object_records (id, object_type_id, "values")
       SELECT 'rec_' || lpad(to_hex(n), 26, '0'), $1, jsonb_build_object('code', 'C' || n, 'billing_email', 'Owner' || n || '@Example.com')
       FROM generate_series(1, ${ROWS}) AS n`,
      [created.body.data.id],
    );
    await db.query(`ANALYZE contacts.object_records`);
    const before = await scans(['object_records_values', 'object_records_values_folded']);
    const wholeBefore = await tableScans('contacts.object_records');

    const res = await stack.api.post('/objects/account/records/batch', {
      operation: 'create',
      items: [
        { values: { code: 'C17' } },
        { values: { code: 'N1', billing_email: 'owner18@example.COM' } },
        { values: { code: 'N2', billing_email: 'fresh@example.com' } },
      ],
    });
    expect(statuses(res)).toEqual([400, 400, 201]);
    expect(res.body.data[0].error.details).toEqual([expect.objectContaining({ field: 'values.code', code: 'duplicate' })]);
    expect(res.body.data[1].error.details).toEqual([expect.objectContaining({ field: 'values.billing_email', code: 'duplicate' })]);

    // The statistics that show the index read are flushed with the same session's table reads: none whole.
    await scannedSince(before);
    expect(await tableScans('contacts.object_records')).toBe(wholeBefore);
  });

  it('checks a batch of contacts against the custom_fields index', async () => {
    expect((await stack.api.post('/objects/contacts/fields', { name: 'badge', type: 'string', unique: true })).status).toBe(201);
    await db.query(
      `INSERT INTO contacts.contacts (id, email, custom_fields, created_at, updated_at)
       SELECT 'cont_' || lpad(to_hex(n), 26, '0'), 'bulk' || n || '@example.com', jsonb_build_object('badge', 'B' || n), now(), now()
       FROM generate_series(1, ${ROWS}) AS n`,
    );
    await db.query(`ANALYZE contacts.contacts`);
    const before = await scans(['contacts_custom_fields']);
    const wholeBefore = await tableScans('contacts.contacts');

    const res = await stack.api.post('/contacts/batch', {
      operation: 'create',
      items: [
        { email: 'one@badge.example', custom_fields: { badge: 'B5' } },
        { email: 'two@badge.example', custom_fields: { badge: 'B-new' } },
      ],
    });
    expect(statuses(res)).toEqual([400, 201]);
    expect(res.body.data[0].error.details).toEqual([expect.objectContaining({ field: 'custom_fields.badge', code: 'duplicate' })]);

    await scannedSince(before);
    expect(await tableScans('contacts.contacts')).toBe(wholeBefore);
  });
});
