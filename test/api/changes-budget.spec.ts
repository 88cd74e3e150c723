import { Client } from 'pg';
import { monotonicFactory } from 'ulid';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { tableLocks } from '../support/table-locks';

/**
 * GET /changes reads an index for every filter (docs/changes.md): a `via` few entries came through and a
 * `created_before` older than every entry read only what they select, not the whole history in id order.
 * And it runs under the budget of queries: past QUERY_TIMEOUT_MS it is a 400 query_too_expensive, in both
 * services that keep history, with nothing left running. What a read touched is counted by PostgreSQL's
 * own statistics and the budget is met by a lock, so nothing depends on how fast the machine is.
 */
describe('GET /changes within its indexes and its budget', () => {
  const HISTORY = 50_000;
  let stack: TestStack;
  /** When the seeded history starts: its entries are one a millisecond from here. */
  let start: number;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      // A day of API changes, then a few captures at its end: the rare channel sits behind all the rest.
      const next = monotonicFactory();
      start = Date.now() - 86_400_000;
      const rows = Array.from({ length: HISTORY + 3 }, (_, i) => ({
        id: `chg_${next(start + i).toLowerCase()}`,
        at: new Date(start + i).toISOString(),
        via: i < HISTORY ? 'api' : 'capture',
      }));
      await db.query(
        `INSERT INTO contacts.changes (id, object, record_id, action, changed, previous, current, actor_type, actor_id, via, request_id, occurred_at)
         SELECT r.id, 'contacts', 'cont_' || lpad(r.n::text, 26, '0'), 'updated', ARRAY['first_name'], NULL, NULL, 'system', NULL, r.via, NULL, r.at
         FROM unnest($1::text[], $2::timestamptz[], $3::text[]) WITH ORDINALITY AS r(id, at, via, n)`,
        [rows.map((r) => r.id), rows.map((r) => r.at), rows.map((r) => r.via)],
      );
      // As a live database would have: statistics of the table's contents.
      await db.query('ANALYZE contacts.changes');
    } finally {
      await db.end();
    }
    // Seeding 50,000 history rows on a loaded machine has taken over a minute: a deadline for a hang, not a speed.
  }, 300_000);
  afterAll(() => stack?.stop());

  /** Reads of contacts.changes since the service started: how many scans, and how many entries they went through. */
  async function reads(): Promise<{ scans: number; entries: number }> {
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT (t.seq_scan + coalesce(t.idx_scan, 0))::int AS scans,
                (t.seq_tup_read + (SELECT coalesce(sum(i.idx_tup_read), 0) FROM pg_stat_user_indexes i WHERE i.relid = t.relid))::int AS entries
         FROM pg_stat_user_tables t WHERE t.schemaname = 'contacts' AND t.relname = 'changes'`,
      );
      return rows[0];
    } finally {
      await db.end();
    }
  }

  /** How many entries of contacts.changes one request read, once the service's statistics of it are in (a backend reports them when idle). */
  async function entriesReadBy(request: () => Promise<void>): Promise<number> {
    const before = await reads();
    await request();
    const after = await eventually(
      async () => {
        const now = await reads();
        return now.scans > before.scans ? now : undefined;
      },
      60_000,
      200,
    );
    return after.entries - before.entries;
  }

  it('finds a rare channel through its index', async () => {
    const read = await entriesReadBy(async () => {
      const res = await stack.api.get('/changes?via=capture');
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(3);
      expect(res.body.data.every((c: { via: string }) => c.via === 'capture')).toBe(true);
    });
    expect(read).toBeLessThan(1000);
  });

  it('bounds created_before by id, so an instant before every entry reads none', async () => {
    const read = await entriesReadBy(async () => {
      const res = await stack.api.get('/changes?created_before=2001-01-01T00:00:00Z');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], has_more: false });
    });
    expect(read).toBeLessThan(1000);

    // The bound keeps every entry before the instant, and only those: the day's first five.
    const early = await stack.api.get(`/changes?created_before=${encodeURIComponent(new Date(start + 5).toISOString())}`);
    expect(early.status).toBe(200);
    expect(early.body.data.map((c: { occurred_at: string }) => c.occurred_at)).toEqual([0, 1, 2, 3, 4].map((i) => new Date(start + i).toISOString()));
    expect(early.body.has_more).toBe(false);
  });

  it('answers 400 query_too_expensive past the budget, in both services, with nothing left running', async () => {
    // Both services' history is held, so each part of the read waits as long as it is allowed to; a part
    // of it is seen waiting, and once it is answered, with the lock still held, none is.
    const { answer: res, seenWaiting } = await tableLocks(stack.databaseUrl).answeredWhileLocked('contacts.changes, deals.changes', () =>
      stack.api.get('/changes?via=merge'),
    );
    expect(seenWaiting).toBe(true);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('query_too_expensive');
    expect(res.body.error.message).toMatch(/record_id/);
    expect((await stack.api.get('/changes?via=capture')).status).toBe(200);
  });
});
