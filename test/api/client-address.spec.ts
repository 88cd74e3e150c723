import { randomKey, startStack, TestStack } from '../support/stack';

/** A random IPv4 address from the documentation and private ranges a forger might pick. */
function randomAddress(): string {
  return `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
}

async function apiKeyLookups(stack: TestStack): Promise<number> {
  const metrics = await fetch(stack.gateway.healthUrl.replace(/\/health$/, '/metrics')).then((r) => r.text());
  const value = /^crm_api_key_lookups_total (\d+)/m.exec(metrics)?.[1];
  if (value === undefined) throw new Error('crm_api_key_lookups_total is missing from /metrics');
  return Number(value);
}

/**
 * Requests without a valid key are limited per client address, and the client address is only what
 * the peer is, or what a proxy listed in TRUSTED_PROXIES says it is.
 */
describe('the limiter on bad keys', () => {
  describe('with no trusted proxy', () => {
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startStack({ services: [], env: { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '5' } });
      // A key in use before the flood of bad keys: known to the gateway, it spends from its own bucket.
      expect((await stack.api.get('/apikeys')).status).toBe(200);
    });
    afterAll(() => stack.stop());

    it('cannot be escaped by sending a random X-Forwarded-For', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await stack.api.get('/contacts', { key: randomKey(), headers: { 'X-Forwarded-For': randomAddress() } });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(5);
    });

    it('spends the bucket before the key lookup: throttled requests cost no database query', async () => {
      // The bucket is empty from the test above or gets empty within a few requests.
      const before = await apiKeyLookups(stack);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await stack.api.get('/contacts', { key: randomKey() })).status);
      const lookups = (await apiKeyLookups(stack)) - before;
      const throttled = statuses.filter((s) => s === 429).length;
      expect(throttled).toBeGreaterThanOrEqual(12);
      // Only the requests the limiter let through were looked up (one a second refills).
      expect(lookups).toBe(statuses.filter((s) => s === 401).length);
      expect(lookups).toBeLessThanOrEqual(20 - throttled);
    });

    it('keeps a key in use working from the same address while bad keys are throttled', async () => {
      // The bucket refills a token a second, so after a slow moment it may let one bad key through again:
      // spend until this address is throttled, then use the good key at once.
      const statuses: number[] = [];
      while (statuses.length < 20 && statuses[statuses.length - 1] !== 429) statuses.push((await stack.api.get('/contacts', { key: randomKey() })).status);
      expect(statuses[statuses.length - 1]).toBe(429);
      expect((await stack.api.get('/apikeys')).status).toBe(200);
    });
  });

  describe('behind a trusted proxy', () => {
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startStack({ services: [], env: { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '5', TRUSTED_PROXIES: '127.0.0.1' } });
    });
    afterAll(() => stack.stop());

    it('limits by the address the proxy reports, whatever the client put before it', async () => {
      // The proxy appends the address it saw; the client controls only what comes before.
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await stack.api.get('/contacts', { key: randomKey(), headers: { 'X-Forwarded-For': `${randomAddress()}, 203.0.113.9` } });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toContain(429);
      // Another client behind the same proxy has a bucket of its own.
      const other = await stack.api.get('/contacts', { key: randomKey(), headers: { 'X-Forwarded-For': '198.51.100.7' } });
      expect(other.status).toBe(401);
    });
  });
});
