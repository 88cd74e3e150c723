import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { tableLocks } from '../support/table-locks';

/**
 * A query has one deadline for the whole request (docs/query.md): its statements and the lookups other
 * services answer for it share QUERY_TIMEOUT_MS, and no part of it runs on once the client's gateway has
 * stopped waiting (RPC_TIMEOUT_MS), however generous the services' own settings. Statements are held up
 * here by a lock on the table they read, so each would run for as long as it is allowed to: nothing
 * depends on how fast the machine is. The services would allow a minute; the gateway waits 3 s.
 *
 * A service gives up 500 ms before its caller does, so that the client hears why (400
 * query_too_expensive). Here every part of the stack shares one process, which a loaded machine can
 * stall for longer than that; the gateway's own 503 then comes first. Either way nothing runs on.
 */
describe('a query ends when its caller stops waiting', () => {
  let stack: TestStack;
  let api: ApiClient;
  let pipeline: { id: string; stages: Array<{ id: string }> };

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'], env: { QUERY_TIMEOUT_MS: '60000', RPC_TIMEOUT_MS: '60000' } });
    api = new ApiClient((await stack.startGateway({ RPC_TIMEOUT_MS: '3000' })).url, stack.apiKey);
    pipeline = (await api.post('/pipelines', { name: 'Deadline', stages: [{ name: 'New', type: 'open' }] })).body.data;
    const contact = (await api.post('/contacts', { email: 'held@example.com', first_name: 'Held' })).body.data;
    expect((await api.post('/deals', { name: 'Held deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, contact_id: contact.id })).status).toBe(
      201,
    );
    // Each path once before it is timed (a first call loads what it needs), an error's included.
    expect((await api.post('/deals/query', { filter: { 'contact.first_name': 'Held' } })).status).toBe(200);
    expect((await api.post('/contacts/query', { filter: { no_such_field: 1 } })).status).toBe(400);
  });
  afterAll(() => stack?.stop());
  const locks = () => tableLocks(stack.databaseUrl);

  const answered = (res: { status: number; body: { error?: { code: string } } }) => `${res.status} ${res.body.error?.code}`;
  const GAVE_UP = ['400 query_too_expensive', '503 service_unavailable'];

  it('stops a statement when the gateway stops waiting, however long the service would allow it', async () => {
    // Checked while the lock is still held: a statement that ran on would still be waiting for it.
    const { answer: res, seenWaiting } = await locks().answeredWhileLocked('contacts.contacts', () =>
      api.post('/contacts/query', { filter: { first_name: 'Held' } }),
    );
    expect(seenWaiting).toBe(true);
    expect(GAVE_UP).toContain(answered(res));
  });

  it('spends one budget on every lookup another service answers, and stops them all when the caller gives up', async () => {
    // Fifty conditions on the contact, each a lookup the contacts service answers.
    const branches = Array.from({ length: 50 }, (_, i) => ({ 'contact.first_name': { $contains: `held ${i}` } }));
    const { answer: res, seenWaiting } = await locks().answeredWhileLocked('contacts.contacts', () =>
      api.post('/deals/query', { filter: { pipeline_id: pipeline.id, $or: branches } }),
    );
    expect(seenWaiting).toBe(true);
    expect(GAVE_UP).toContain(answered(res));

    // Nothing of it was left holding a connection: both services answer as before.
    const found = await api.post('/deals/query', { filter: { pipeline_id: pipeline.id, 'contact.first_name': 'Held' } });
    expect(found.status).toBe(200);
    expect(found.body.data).toHaveLength(1);
  });
});
