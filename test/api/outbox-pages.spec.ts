import type { Logger } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { recoverFromOutboxes } from '@crm/messaging';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { startStack, TestStack } from '../support/stack';

/**
 * A producing service answers a reader recovering from a stream reset with its outbox, a page at a time, in
 * commit order (docs/operations.md, "Stream reset"). The contacts service runs alone here, so no reader says
 * how far it has read and every row stays in the outbox. Its seqs are made to cross from two digits to three,
 * where an order by their text would put 100 before 95.
 */
describe('outbox pages for a recovering reader', () => {
  let stack: TestStack;
  let db: Client;
  let nc: NatsConnection;
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    nc = await connect({ servers: stack.env.NATS_URL });
  });
  afterAll(async () => {
    await nc?.close();
    await db?.end();
    await stack?.stop();
  });

  it('are in seq order across seqs of different lengths, and page on without skipping or repeating a row', async () => {
    await db.query(`SELECT setval(pg_get_serial_sequence('contacts.outbox', 'seq'), 94)`);
    const created: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await stack.api.post('/contacts', { email: `page-${i}@example.com` });
      expect(res.status).toBe(201);
      created.push(res.body.data.id);
    }
    const seqs = (await db.query(`SELECT seq::int AS seq FROM contacts.outbox ORDER BY outbox.seq`)).rows.map((r) => r.seq);
    expect(seqs.some((s) => s < 100) && seqs.some((s) => s >= 100)).toBe(true);

    for (const pageSize of [500, 5]) {
      const answered: string[] = [];
      await recoverFromOutboxes({
        nc,
        namespace: stack.namespace,
        logger: quiet,
        name: 'outbox-pages-test',
        previousStream: null,
        services: [ServiceName.Contacts],
        pageSize,
        signal: new AbortController().signal,
        apply: async (events) =>
          void answered.push(...events.filter((e) => e.type === 'contact.created').map((e) => (e.data as { contact_id: string }).contact_id)),
      });
      expect({ pageSize, answered }).toEqual({ pageSize, answered: created });
    }
  });
});
