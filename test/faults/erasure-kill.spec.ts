import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { ApiClient, eventually } from '../support/api-client';
import { rowsNaming, streamMessagesNaming } from '../support/erasure-scan';
import { backendWaitingAt } from '../support/table-locks';
import { FaultStack, startFaultStack } from '../support/fault-stack';

/**
 * SIGKILL of the contacts service halfway through an erasure (docs/privacy.md, "Rules"). A contact with
 * many history entries and events, and an activity of another contact naming them; a SHARE lock on
 * contacts.changes stops the erasure's contacts step at the statement that records the contact's deletion,
 * after the activities were already erased and committed; contacts is killed there, by signal, not by
 * timing. After a restart the erasure resumes (once the killed replica's lease lapses) to `completed`, the
 * receipt counts what the first run did as well as what the resumed run did, and nothing of the person is
 * left in any table or in the stream.
 */
const UPDATES = 400;
const SIGNAL_TIMEOUT_MS = 120_000;
const tag = randomBytes(4).toString('hex');
const EMAIL = `kill.${tag}@erase.example`;
const SURNAME = `Quorvandel${tag}`;
const PHONE = `+44 20 7946 ${String(1000 + (parseInt(tag, 16) % 9000))}`;
const NEEDLES = [EMAIL, SURNAME, PHONE];

describe('fault: SIGKILL of the contacts service during an erasure', () => {
  let stack: FaultStack;
  let api: ApiClient;
  let db: Client;
  let holder: Client;
  let nc: NatsConnection;

  beforeAll(async () => {
    stack = await startFaultStack({ CRM_READ_WRITE_ALSO_GRANTS: 'privacy:delete,privacy:read' });
    api = stack.api;
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    holder = new Client({ connectionString: stack.env.DATABASE_URL });
    await Promise.all([db.connect(), holder.connect()]);
    nc = await connect({ servers: stack.env.NATS_URL });
  }, 180_000);

  afterAll(async () => {
    await nc?.close();
    await Promise.all([db?.end().catch(() => undefined), holder?.end().catch(() => undefined)]);
    await stack?.stop();
  });

  async function ok<T = any>(res: Promise<{ status: number; body: any; text: string }>): Promise<T> {
    const { status, body, text } = await res;
    if (status >= 300) throw new Error(`answered ${status}: ${text.slice(0, 300)}`);
    return body.data as T;
  }

  const count = async (sql: string, params: unknown[]) => Number((await db.query<{ n: string }>(sql, params)).rows[0].n);

  it('resumes to completed with the counts of both runs, and nothing of the person is left', async () => {
    const contact = await ok(api.post('/contacts', { email: EMAIL, first_name: 'Kay', last_name: SURNAME, phone: PHONE }));
    const other = await ok(api.post('/contacts', { email: `other.${tag}@keep.example`, first_name: 'Otto' }));
    const shared = await ok(api.post('/activities', { type: 'note', contact_id: other.id, subject: `Otto met ${SURNAME}`, body: 'kept' }));
    // Many history entries and events: eight writers PATCH the contact, each value naming the person.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < UPDATES) {
          const i = next++;
          await ok(api.patch(`/contacts/${contact.id}`, { title: `${SURNAME} #${i}` }));
        }
      }),
    );
    // The log has every event of the contact (the signal the erasure's events step will see them all).
    const ownEvents = UPDATES + 1;
    await eventually(
      async () =>
        (await count(`SELECT count(*) AS n FROM events.events WHERE type LIKE 'contact.%' AND data->>'contact_id' = $1`, [contact.id])) === ownEvents
          ? true
          : undefined,
      60_000,
      100,
    );
    const entries = await count(`SELECT count(*) AS n FROM contacts.changes WHERE object = 'contacts' AND record_id = $1`, [contact.id]);
    expect(entries).toBe(UPDATES + 1);

    await holder.query('BEGIN');
    await holder.query('LOCK TABLE contacts.changes IN SHARE MODE');
    let erasureId: string;
    try {
      erasureId = (await ok(api.post('/privacy/erasures', { subject: { object: 'contacts', id: contact.id }, reason: 'fault test' }))).id;
      // The contacts step is stopped at the deletion's change entry; the activities store before it has committed.
      const pid = await backendWaitingAt(db, '%INSERT INTO changes%', SIGNAL_TIMEOUT_MS);
      expect(await count(`SELECT count(*) AS n FROM contacts.erasure_ledger WHERE erasure_id = $1 AND store = 'activities'`, [erasureId])).toBe(1);
      expect((await db.query(`SELECT status, step FROM contacts.erasures WHERE id = $1`, [erasureId])).rows[0]).toEqual({
        status: 'running',
        step: 'contacts',
      });
      await stack.processes.contacts.kill9();
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await holder.query('ROLLBACK');
    }
    await stack.start('contacts');

    // The restarted service takes the erasure over once the killed one's lease lapses (15 s).
    const done = await eventually(
      async () => {
        const res = await api.get(`/privacy/erasures/${erasureId}`);
        if (res.status >= 500) return undefined;
        if (res.body.data.status === 'failed') throw new Error(res.body.data.error);
        return res.body.data.status === 'completed' ? res.body.data : undefined;
      },
      90_000,
      200,
      (err) => err instanceof Error && !/fetch failed|ECONNREFUSED/.test(err.message),
    );
    const store = (name: string) => done.receipt.stores.find((s: { store: string }) => s.store === name);
    // Done by the killed run, counted from the ledger; done by the resumed run.
    expect(store('contacts.activities')).toEqual({ store: 'contacts.activities', deleted: 0, redacted: 1 });
    expect(store('contacts.contacts')).toEqual({ store: 'contacts.contacts', deleted: 1, redacted: 0 });
    // Every entry of the contact, its deletion's included, and the other contact's activity entry naming them.
    expect(store('contacts.changes')).toEqual({ store: 'contacts.changes', deleted: 0, redacted: entries + 1 + 1 });
    const redactedEvents = await count(
      `SELECT count(*) AS n FROM events.events WHERE type LIKE 'contact.%' AND data->>'contact_id' = $1 AND (data->>'redacted')::boolean`,
      [contact.id],
    );
    expect(redactedEvents).toBeGreaterThanOrEqual(ownEvents);
    // The contact's own events (an activity's events carry ids only).
    expect(store('events.log')).toEqual({ store: 'events.log', deleted: 0, redacted: redactedEvents });
    expect(store('events.stream').deleted).toBeGreaterThanOrEqual(ownEvents);
    expect((await ok(api.get(`/activities/${shared.id}`))).subject).toBe('Otto met [redacted]');
    expect((await api.get(`/contacts/${contact.id}`)).status).toBe(404);

    expect(await rowsNaming(db, NEEDLES)).toEqual([]);
    expect(await streamMessagesNaming(nc, stack.env.CRM_NAMESPACE!, NEEDLES)).toEqual([]);
  }, 300_000);
});
