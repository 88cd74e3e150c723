import { spawn } from 'child_process';
import Redis from 'ioredis';
import { ApiClient, eventually } from '../support/api-client';
import { freePort } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

function limitHeaders(res: { headers: Headers }) {
  return Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h)]));
}

describe('rate limiting', () => {
  describe('with a small bucket', () => {
    let stack: TestStack;
    // 60 per minute refills one token a second; a burst of 5 empties quickly.
    beforeAll(async () => {
      stack = await startStack({ services: [], env: { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '5' } });
    });
    afterAll(() => stack.stop());

    async function freshKey(): Promise<ApiClient> {
      // Keys are made straight in the database through the CLI's code path would be slower; a second stack key is enough.
      const res = await stack.api.post('/apikeys', { name: 'limited', scope: 'read-write' });
      if (res.status !== 201) throw new Error(`could not create a key: ${res.status} ${res.text}`);
      return stack.api.withKey(res.body.data.key);
    }

    it('puts the limit headers on every response, errors included', async () => {
      const client = await freshKey();
      const responses = [
        await client.get('/apikeys'),
        await client.get('/no/such/route'),
        await client.post('/apikeys', {}),
        await client.get('/apikeys', { key: 'crm_live_wrongwrongwrongwrongwrongwrong' }),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 404, 400, 401]);
      for (const res of responses) {
        const h = limitHeaders(res);
        expect(h['x-ratelimit-limit']).toBe('60');
        expect(Number(h['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
        expect(Number(h['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      }
      // Remaining counts down within one key's bucket.
      const remaining = responses.slice(0, 3).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
      expect(remaining).toEqual([...remaining].sort((a, b) => b - a));
      expect(remaining[0]).toBeGreaterThan(remaining[2]);
    });

    it('answers 429 with Retry-After and the seconds to wait once the bucket is empty, then refills', async () => {
      const client = await freshKey();
      const statuses: number[] = [];
      let limited;
      for (let i = 0; i < 8; i++) {
        const res = await client.get('/apikeys');
        statuses.push(res.status);
        if (res.status === 429) {
          limited = res;
          break;
        }
      }
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
      expect(limited).toBeDefined();
      const retryAfter = Number(limited!.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(limited!.body).toEqual({
        error: { code: 'rate_limit_exceeded', message: `Rate limit exceeded; retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.` },
      });
      expect(limited!.headers.get('x-ratelimit-remaining')).toBe('0');

      await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
      expect((await client.get('/apikeys')).status).toBe(200);
    });

    it('keeps one bucket per key', async () => {
      const a = await freshKey();
      const b = await freshKey();
      let status = 200;
      for (let i = 0; i < 10 && status !== 429; i++) status = (await a.get('/apikeys')).status;
      expect(status).toBe(429);
      expect((await b.get('/apikeys')).status).toBe(200);
    });

    it('shares one bucket between gateway replicas', async () => {
      // Two replicas refilling one token a minute: no token comes back while the requests run, however slowly.
      const slowRefill = { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '5' };
      const [first, second] = [await stack.startGateway(slowRefill), await stack.startGateway(slowRefill)];
      const key = (await stack.api.post('/apikeys', { name: 'shared', scope: 'read' })).body.data.key;
      const viaFirst = new ApiClient(first.url, key);
      const viaSecond = new ApiClient(second.url, key);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await (i % 2 ? viaSecond : viaFirst).get('/apikeys')).status);
      // Five tokens in all, not five per replica.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    });
  });

  describe('when Redis is unreachable', () => {
    it('lets requests through, keeps the headers, and counts it in a metric', async () => {
      const port = await freePort();
      const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      const admin = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
      // A fresh client per look: one client's connect() after a failed attempt only says it is already connecting.
      await eventually(
        async () => {
          const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
          try {
            await probe.connect();
            return (await probe.ping()) === 'PONG' ? true : undefined;
          } catch {
            return undefined;
          } finally {
            probe.disconnect();
          }
        },
        120_000,
        50,
      );
      await admin.connect();
      const stack = await startStack({ services: [], env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
      try {
        expect((await stack.api.get('/apikeys')).status).toBe(200);
        const exited = new Promise((r) => (redis.exitCode !== null ? r(null) : redis.once('exit', r)));
        await admin.shutdown('NOSAVE').catch(() => undefined);
        await exited;

        const during = await stack.api.get('/apikeys');
        expect(during.status).toBe(200);
        expect(during.headers.get('x-ratelimit-limit')).toBe('1000');
        expect(during.headers.get('x-ratelimit-remaining')).toBe('1000');
        const metrics = await fetch(stack.gateway.healthUrl.replace(/\/health$/, '/metrics')).then((r) => r.text());
        const failOpen = Number(/^crm_rate_limiter_fail_open_total (\d+)/m.exec(metrics)?.[1]);
        expect(failOpen).toBeGreaterThanOrEqual(1);
        const health = (await fetch(stack.gateway.healthUrl).then((r) => r.json())) as { error: Record<string, { status: string }> };
        expect(health.error.redis.status).toBe('down');
        // Readiness does not depend on Redis while the limiter fails open, but still shows it down.
        const ready = await fetch(`${stack.gateway.healthUrl}/ready`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ status: 'ok', details: { redis: { status: 'down' }, database: { status: 'up' }, nats: { status: 'up' } } });
      } finally {
        admin.disconnect();
        redis.kill();
        await stack.stop().catch(() => undefined);
      }
    });
  });
});
