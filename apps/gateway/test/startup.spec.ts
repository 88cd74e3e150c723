import { ApiClient, eventually, runBuilt } from '@crm/test-support';
import { dropNamespace, randomKey, startStack, testEnv } from '@crm/test-support';
import { loadGatewayConfig } from '../src/config';
import { startGateway } from '../src/gateway.app';

const MAIN = 'apps/gateway/src/main.js';
const CLI = 'apps/gateway/src/cli.js';

describe('gateway configuration and start-up', () => {
  it('names the bad variable when configuration is invalid', () => {
    expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow('PORT must be an integer');
    expect(() => loadGatewayConfig({ REDIS_URL: 'http://localhost' })).toThrow('REDIS_URL must use redis or rediss://');
    expect(() => loadGatewayConfig({ CRM_NAMESPACE: 'Bad-Name' })).toThrow('CRM_NAMESPACE');
    expect(() => loadGatewayConfig({ CRM_BOOTSTRAP_API_KEY: 'short' })).toThrow('CRM_BOOTSTRAP_API_KEY must look like');
    expect(() => loadGatewayConfig({ CRM_BOOTSTRAP_API_KEY: randomKey('test') })).toThrow('is a test key but CRM_KEY_ENV is live');
    expect(loadGatewayConfig({})).toMatchObject({ port: 3000, rateLimitPerMinute: 1000, rateLimitBurst: 1000, namespace: 'crm' });
  });

  it('exits with one clear line when a dependency is unreachable', async () => {
    const env = testEnv();
    // The gateway creates its database before it finds Redis unreachable.
    const redisDown = await runBuilt(MAIN, [], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    await dropNamespace(env);
    expect(redisDown.status).toBe(1);
    expect(redisDown.stderr.trim()).toMatch(/^gateway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 is unreachable: .+$/);
    const pgDown = await runBuilt(MAIN, [], { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/crm' });
    expect(pgDown.status).toBe(1);
    expect(pgDown.stderr.trim()).toMatch(/^gateway: cannot start: PostgreSQL at 127\.0\.0\.1:1 is unreachable: .+$/);
    const badPort = await runBuilt(MAIN, [], { ...env, PORT: '-1' });
    expect(badPort.stderr.trim()).toBe('gateway: cannot start: PORT must be at least 0, got -1');
  });

  it('creates the bootstrap key once, however often gateways start with it', async () => {
    const stack = await startStack({ services: [] });
    try {
      await stack.startGateway();
      await stack.startGateway();
      const keys = await stack.api.listAll('/apikeys');
      expect(keys.filter((k) => k.name === 'bootstrap')).toHaveLength(1);
      expect(keys.find((k) => k.name === 'bootstrap')).toMatchObject({ scope: 'read-write', last4: stack.apiKey.slice(-4) });
    } finally {
      await stack.stop();
    }
  });

  it('keeps a revoked bootstrap key revoked across restarts', async () => {
    const key = randomKey();
    const env = testEnv(undefined, { CRM_BOOTSTRAP_API_KEY: key });
    const first = await startGateway(env);
    try {
      const admin = await new ApiClient(first.url, key).post('/apikeys', { name: 'admin', scope: 'read-write' });
      const bootstrapId = (await new ApiClient(first.url, key).listAll('/apikeys')).find((k) => k.name === 'bootstrap').id;
      expect((await new ApiClient(first.url, admin.body.data.key).delete(`/apikeys/${bootstrapId}`)).status).toBe(204);
      await first.close();
      const second = await startGateway(env);
      try {
        expect((await new ApiClient(second.url, key).get('/apikeys')).status).toBe(401);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      await dropNamespace(env);
    }
  });

  it('creates, lists and revokes keys from the command line', async () => {
    const stack = await startStack({ services: ['events'] });
    try {
      const created = await runBuilt(CLI, ['create', '--name', 'ops', '--scope', 'read'], stack.env);
      expect(created.status).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(/^crm_live_[A-Za-z0-9]{32}$/);
      expect(created.stderr).toMatch(/^created key_[0-9a-z]{26} \(read\); the key is shown only this once/);
      expect((await stack.api.withKey(key).get('/apikeys')).status).toBe(200);

      const listed = await runBuilt(CLI, ['list'], stack.env);
      expect(listed.stdout).toContain(`…${key.slice(-4)}\tops`);
      expect(listed.stdout).not.toContain(key);

      const id = /created (key_[0-9a-z]{26})/.exec(created.stderr)![1];
      expect((await runBuilt(CLI, ['revoke', '--id', id], stack.env)).status).toBe(0);
      expect((await stack.api.withKey(key).get('/apikeys')).status).toBe(401);

      const bad = await runBuilt(CLI, ['create', '--name', 'x', '--scope', 'admin'], stack.env);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain('scope must be one of read, read-write, capture-only');
      expect((await runBuilt(CLI, [], stack.env)).status).toBe(2);

      // The CLI only writes the events to the gateway's outbox; the running gateway's relay publishes them.
      const logged = await eventually(async () => {
        const events = await stack.api.listAll('/events?type=api_key.*');
        const mine = events.filter((e) => e.data.key_id === id).map((e) => e.type);
        return mine.length === 2 ? mine : undefined;
      });
      expect(logged).toEqual(['api_key.created', 'api_key.revoked']);
    } finally {
      await stack.stop();
    }
  });
});
