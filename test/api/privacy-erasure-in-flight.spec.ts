import { eventStreamName, eventSubject } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { rowsNaming, streamMessagesNaming } from '../support/erasure-scan';
import { startStack, TestStack } from '../support/stack';

/** The advisory locks under which the event log and the webhooks intake copy a batch of the stream. */
const COPY_LOCKS = { 'event-log': 'crm:event-log', 'webhook-intake': 'crm:webhooks:event-insert' } as const;
type Copy = keyof typeof COPY_LOCKS;

/**
 * Events already in the stream but not yet copied when an erasure runs (docs/privacy.md): the log's and
 * the webhooks' copies are held back by their own locks, so the person's `contact.created` sits in the
 * stream unread while the erasure is asked. Each copy is let go only once the erasure has finished or
 * is seen waiting for that copy; either way the copies take the event in, and then nothing names the
 * person. A build whose steps redact the copies without waiting for them finishes while they are held,
 * and the event lands afterwards, unredacted.
 */
describe('Erasing a person whose events are still on their way', () => {
  let stack: TestStack;
  let db: Client;
  let holder: Client;
  let nc: NatsConnection;
  const previous = process.env.CRM_READ_WRITE_ALSO_GRANTS;

  beforeAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:delete,privacy:read';
    stack = await startStack({ services: ['contacts', 'deals', 'events', 'webhooks'] });
    db = new Client({ connectionString: stack.databaseUrl });
    holder = new Client({ connectionString: stack.databaseUrl });
    await Promise.all([db.connect(), holder.connect()]);
    nc = await connect({ servers: stack.env.NATS_URL });
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = previous;
    await nc?.close();
    await holder?.end();
    await db?.end();
    await stack?.stop();
  });

  /** Whether the service's erasure step says it is waiting for its copy of the stream (its /metrics). */
  async function waitingFor(copy: Copy): Promise<boolean> {
    const service = copy === 'event-log' ? stack.services.events! : stack.services.webhooks!;
    const text = await (await fetch(service.healthUrl.replace(/\/health$/, '/metrics'))).text();
    return new RegExp(`^crm_erasure_stream_waits\\{consumer="${copy}"\\} [1-9]`, 'm').test(text);
  }

  it('waits for the log and the webhooks copies to take the event in, then redacts it there', async () => {
    const tag = randomBytes(4).toString('hex');
    const email = `transit.${tag}@erase.example`;
    const surname = `Unterwegs${tag}`;
    const held = new Set<Copy>(Object.keys(COPY_LOCKS) as Copy[]);
    for (const copy of held) await holder.query(`SELECT pg_advisory_lock(hashtext($1))`, [COPY_LOCKS[copy]]);

    const created = await stack.api.post('/contacts', { email, first_name: 'Ines', last_name: surname });
    expect(created.status).toBe(201);
    const contactId = (created.body.data as { id: string }).id;
    // In the stream, and neither copy can have it: both are held.
    const jsm = await nc.jetstreamManager();
    await eventually(async () => {
      const last = await jsm.streams
        .getMessage(eventStreamName(stack.namespace), { last_by_subj: eventSubject(stack.namespace, 'contact.created') })
        .catch(() => undefined);
      return last && new TextDecoder().decode(last.data).includes(contactId) ? true : undefined;
    });

    const asked = await stack.api.post('/privacy/erasures', { subject: { object: 'contacts', id: contactId } });
    expect(asked.status).toBe(202);
    const erasureId = (asked.body.data as { id: string }).id;
    const status = async () => (await stack.api.get(`/privacy/erasures/${erasureId}`)).body.data as { status: string; error: string | null };

    // Let each copy go once the erasure waits for it; once the erasure is over, let both go.
    const done = await eventually(
      async () => {
        const view = await status();
        for (const copy of [...held]) {
          if (view.status === 'completed' || view.status === 'failed' || (await waitingFor(copy))) {
            await holder.query(`SELECT pg_advisory_unlock(hashtext($1))`, [COPY_LOCKS[copy]]);
            held.delete(copy);
          }
        }
        return view.status === 'completed' || view.status === 'failed' ? view : undefined;
      },
      120_000,
      100,
    );
    for (const copy of held) await holder.query(`SELECT pg_advisory_unlock(hashtext($1))`, [COPY_LOCKS[copy]]);
    expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: null });

    // Both copies hold the event now (read after it arrived, whichever build this is): kept in place, blanked.
    const copies = await eventually(async () => {
      const log = await db.query(`SELECT data FROM events.events WHERE type = 'contact.created' AND data->>'contact_id' = $1`, [contactId]);
      const kept = await db.query(`SELECT body FROM webhooks.webhook_events WHERE type = 'contact.created' AND (body::jsonb)->'data'->>'contact_id' = $1`, [
        contactId,
      ]);
      return log.rowCount && kept.rowCount ? { log: log.rows[0].data, kept: JSON.parse(kept.rows[0].body) } : undefined;
    }, 60_000);
    expect(copies.log.redacted).toBe(true);
    expect(copies.kept.redacted).toBe(true);
    expect(await rowsNaming(db, [email, surname])).toEqual([]);
    expect(await streamMessagesNaming(nc, stack.namespace, [email, surname])).toEqual([]);
  });
});
