import { randomBytes } from 'crypto';
import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const BURST = 20;
const tag = () => randomBytes(4).toString('hex');
const items = (n: number, label: string) => Array.from({ length: n }, (_, i) => ({ email: `${label}-${i}-${tag()}@cost.example` }));
const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));

/**
 * A batch costs one token per item; one the bucket cannot pay for whole is a 429 that spends nothing, and
 * its cost is capped at the bucket's capacity (docs/batch.md, Rate limit). One token a minute: the bucket
 * barely refills while a test runs, and what it does refill only ever raises what a later answer shows.
 */
describe('The rate limit of batch writes', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: String(BURST) } });
  });
  afterAll(() => stack.stop());

  /** A key of its own, so each test starts from a full bucket. */
  async function freshClient(): Promise<ApiClient> {
    const res = await stack.api.post('/apikeys', { name: 'batch cost', scope: 'read-write' });
    expect(res.status).toBe(201);
    return stack.api.withKey(res.body.data.key);
  }

  async function written(emails: string[]): Promise<string[]> {
    const res = await stack.api.post('/contacts/query', { filter: { email: { $in: emails } }, fields: ['email'] });
    expect(res.status).toBe(200);
    return res.body.data.map((c: { email: string }) => c.email);
  }

  it('refuses a batch the bucket cannot pay for whole with a 429 that spends nothing', async () => {
    const client = await freshClient();
    const paid = await client.post('/contacts/batch', { operation: 'create', items: items(15, 'paid') });
    expect(paid.status).toBe(200);
    const left = remaining(paid);
    expect(left).toBeLessThan(BURST - 10);

    const refused = items(left + 3, 'refused');
    const answer = await client.post('/contacts/batch', { operation: 'create', items: refused });
    expect(answer.status).toBe(429);
    expect(answer.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // A single request now costs one token of what the refused batch left: it took none.
    const next = await client.get('/contacts?limit=1');
    expect(next.status).toBe(200);
    expect(remaining(next)).toBeGreaterThanOrEqual(left - 1);
    expect(await written(refused.map((i) => i.email))).toEqual([]);
  });

  it('caps the cost of a batch at the burst, so a full bucket lets a batch larger than it through', async () => {
    const client = await freshClient();
    const batch = items(BURST + 10, 'capped');
    const answer = await client.post('/contacts/batch', { operation: 'create', items: batch });
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((r: { status: number }) => r.status)).toEqual(batch.map(() => 201));
    expect(remaining(answer)).toBeLessThan(BURST - 10);
    expect((await written(batch.map((i) => i.email))).sort()).toEqual(batch.map((i) => i.email.toLowerCase()).sort());
  });
});
