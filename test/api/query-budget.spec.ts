import { Client } from 'pg';
import { startStack, TestStack } from '../support/stack';

/**
 * A query no index serves runs under QUERY_TIMEOUT_MS: past it the client gets 400 query_too_expensive
 * with a hint, never a 5xx, and the service goes on answering. The budget here is the smallest allowed,
 * against a table large enough that no machine scans it in that time.
 */
describe('the query time budget', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { QUERY_TIMEOUT_MS: '10' } });
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO contacts.contacts (id, email, first_name, created_at, updated_at)
         SELECT 'cont_' || lpad(to_hex(n), 26, '0'), 'bulk' || n || '@example.com', 'Bulk ' || n, now(), now()
         FROM generate_series(1, 400000) AS n`,
      );
    } finally {
      await db.end();
    }
  });
  afterAll(() => stack?.stop());

  it('answers a query past its budget with 400 query_too_expensive and a hint, and goes on serving', async () => {
    const slow = await stack.api.post('/contacts/query', {
      filter: { first_name: { $ends_with: 'no such ending' } },
      sort: [{ field: 'first_name', direction: 'desc' }],
    });
    expect(slow.status).toBe(400);
    expect(slow.body.error.code).toBe('query_too_expensive');
    expect(slow.body.error.message).toMatch(/indexed field/);

    // The connection the query held is back in the pool: the service answers as before.
    const one = await stack.api.get(`/contacts/cont_${'1'.padStart(26, '0')}`);
    expect(one.status).toBe(200);
    expect(one.body.data.email).toBe('bulk1@example.com');
  });
});
