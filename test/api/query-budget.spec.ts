import { startStack, TestStack } from '../support/stack';
import { tableLocks } from '../support/table-locks';

/**
 * A query runs under QUERY_TIMEOUT_MS: past it the client gets 400 query_too_expensive with a hint, never
 * a 5xx, and the service goes on answering. The budget here is the smallest allowed, and the query's
 * statement is held up by a lock on the table it reads, so it is past its budget on any machine however
 * fast, without a table too large to scan.
 */
describe('the query time budget', () => {
  let stack: TestStack;
  let contactId: string;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { QUERY_TIMEOUT_MS: '10' } });
    contactId = (await stack.api.post('/contacts', { email: 'budget@example.com', first_name: 'Budget' })).body.data.id;
  });
  afterAll(() => stack?.stop());

  it('answers a query past its budget with 400 query_too_expensive and a hint, and goes on serving', async () => {
    // 10 ms is too short to catch the statement waiting; the table is small, so only the lock makes it slow.
    const slow = await tableLocks(stack.databaseUrl).whileLocked('contacts.contacts', () =>
      stack.api.post('/contacts/query', {
        filter: { first_name: { $ends_with: 'no such ending' } },
        sort: [{ field: 'first_name', direction: 'desc' }],
      }),
    );
    expect(slow.status).toBe(400);
    expect(slow.body.error.code).toBe('query_too_expensive');
    expect(slow.body.error.message).toMatch(/indexed field/);

    // The connection the query held is back in the pool: the service answers as before.
    const one = await stack.api.get(`/contacts/${contactId}`);
    expect(one.status).toBe(200);
    expect(one.body.data.email).toBe('budget@example.com');
  });
});
