import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const OTHERS = 6;
const SUBJECT_HISTORY = 150;

/**
 * An erasure while other records are written (docs/privacy.md): the erased person's entries are redacted
 * in place, and every other record's writes made during it are in its history and in the event log, once
 * each and in the order they were acknowledged, with no hole in the log's positions.
 */
describe('Erasing a person while other records are written', () => {
  let stack: TestStack;
  let db: Client;
  const previous = process.env.CRM_READ_WRITE_ALSO_GRANTS;

  beforeAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:delete,privacy:read';
    stack = await startStack({ services: ['contacts', 'deals', 'events', 'webhooks'] });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = previous;
    await db?.end();
    await stack?.stop();
  });

  async function created(body: Record<string, unknown>): Promise<string> {
    const res = await stack.api.post('/contacts', body);
    if (res.status !== 201) throw new Error(`POST /contacts answered ${res.status}: ${res.text}`);
    return (res.body.data as { id: string }).id;
  }

  it('loses, doubles and reorders nothing of the other records', async () => {
    const tag = randomBytes(4).toString('hex');
    const subject = await created({ email: `erased.${tag}@load.example`, last_name: `Vergessen${tag}` });
    for (let i = 0; i < SUBJECT_HISTORY; i++) expect((await stack.api.patch(`/contacts/${subject}`, { title: `Erased round ${i}` })).status).toBe(200);
    const others = await Promise.all(Array.from({ length: OTHERS }, (_, i) => created({ email: `kept${i}.${tag}@load.example`, first_name: `Kept${i}` })));

    // One writer a record, each writing its rounds in order until the erasure is over; a round is kept once acknowledged.
    const acknowledged = new Map<string, string[]>(others.map((id) => [id, []]));
    let erasing = true;
    const writers = others.map(async (id) => {
      for (let round = 0; erasing || round < 5; round++) {
        const title = `round ${round}`;
        for (;;) {
          const res = await stack.api.patch(`/contacts/${id}`, { title });
          if (res.status === 200) break;
          // A 503 on a busy machine may or may not have been applied: sent again, the second is a no-op or the write.
          if (res.status !== 503) throw new Error(`PATCH answered ${res.status}: ${res.text}`);
        }
        acknowledged.get(id)!.push(title);
      }
    });

    const asked = await stack.api.post('/privacy/erasures', { subject: { object: 'contacts', id: subject } });
    expect(asked.status).toBe(202);
    const erasure = await eventually(
      async () => {
        const view = (await stack.api.get(`/privacy/erasures/${asked.body.data.id}`)).body.data as { status: string };
        return view.status === 'completed' || view.status === 'failed' ? view : undefined;
      },
      120_000,
      100,
    );
    erasing = false;
    await Promise.all(writers);
    expect(erasure.status).toBe('completed');

    // Written after every acknowledged write: once it is in the log, so is everything the contacts service committed before it.
    const marker = await created({ email: `marker.${tag}@load.example` });
    await eventually(async () => {
      const events = await stack.api.listAll<{ data: { contact_id: string } }>(`/events?type=contact.created`);
      return events.some((e) => e.data.contact_id === marker) ? true : undefined;
    }, 120_000);

    const updates = await stack.api.listAll<{ data: { contact_id: string; current?: { title?: string }; redacted?: boolean } }>('/events?type=contact.updated');
    for (const id of others) {
      const wrote = acknowledged.get(id)!;
      expect(wrote.length).toBeGreaterThanOrEqual(5);
      const logged = updates.filter((e) => e.data.contact_id === id).map((e) => e.data.current?.title);
      expect({ id, logged }).toEqual({ id, logged: wrote });
      const history = await stack.api.listAll<{ changed: string[]; current: Record<string, unknown> | null }>(`/contacts/${id}/changes`);
      const titles = history.filter((entry) => entry.changed.includes('title')).map((entry) => entry.current?.title);
      expect({ id, titles: [...titles].sort() }).toEqual({ id, titles: [...wrote].sort() });
    }
    // The erased person's updates are still in the log, each in its place, blanked.
    const subjectUpdates = updates.filter((e) => e.data.contact_id === subject || e.data.redacted);
    expect(subjectUpdates.filter((e) => e.data.current?.title?.startsWith('Erased'))).toEqual([]);

    const { rows } = await db.query<{ n: string; low: string; high: string }>(
      `SELECT count(*)::text AS n, min(position)::text AS low, max(position)::text AS high FROM events.events`,
    );
    expect(BigInt(rows[0].high) - BigInt(rows[0].low) + 1n).toBe(BigInt(rows[0].n));
  });
});
