import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { tableLocks } from '../support/table-locks';

/** How long a service waits for another; the erasure request's own wait, too. */
const RPC_TIMEOUT_MS = 3000;

/**
 * An erasure outlasts the request that asked for it (docs/privacy.md): its steps go on after the caller of
 * POST /privacy/erasures has its answer and after that request's wait is over. Here the contacts step is
 * held on a lock until well past that wait; the steps after it still ask their services and complete.
 */
describe('An erasure that outlasts the request asking for it', () => {
  let stack: TestStack;
  const previous = process.env.CRM_READ_WRITE_ALSO_GRANTS;

  beforeAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:delete,privacy:read';
    stack = await startStack({ services: ['contacts', 'deals', 'events', 'webhooks'], env: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) } });
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = previous;
    await stack?.stop();
  });

  it('completes every step after the request that started it stopped waiting', async () => {
    const tag = randomBytes(4).toString('hex');
    const created = await stack.api.post('/contacts', { email: `late.${tag}@erase.example`, last_name: `Spaeter${tag}` });
    expect(created.status).toBe(201);
    const contact = created.body.data as { id: string };
    expect((await stack.api.patch(`/contacts/${contact.id}`, { title: 'Kept until erased' })).status).toBe(200);

    const locks = tableLocks(stack.databaseUrl);
    const erasure = await locks.whileLocked('contacts.changes', async () => {
      const asked = await stack.api.post('/privacy/erasures', { subject: { object: 'contacts', id: contact.id } });
      expect(asked.status).toBe(202);
      // The contacts step is waiting for the lock: the erasure is past its first step and into its own work.
      await eventually(async () => ((await locks.waiting()) > 0 ? true : undefined), 60_000, 50);
      // Held past the end of the asking request's wait, whatever this machine's speed: a lower bound.
      await new Promise((resolve) => setTimeout(resolve, RPC_TIMEOUT_MS + 1000));
      return asked.body.data as { id: string };
    });

    const done = await eventually(
      async () => {
        const res = await stack.api.get(`/privacy/erasures/${erasure.id}`);
        const view = res.body.data as { status: string; error: string | null; receipt?: { stores: Array<{ store: string }> } };
        return view.status === 'completed' || view.status === 'failed' ? view : undefined;
      },
      120_000,
      200,
    );
    expect({ status: done.status, error: done.error }).toEqual({ status: 'completed', error: null });
    // The steps after the held one answered: the events service's and the webhooks service's stores are in the receipt.
    const stores = done.receipt!.stores.map((s) => s.store);
    expect(stores).toEqual(expect.arrayContaining(['events.stream', 'contacts.changes']));
    expect(stores.some((s) => s.startsWith('webhooks.'))).toBe(true);
  });
});
