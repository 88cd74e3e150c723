import { ApiClient, eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);

describe('API keys', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('shows the full key once, at creation, and only last4 afterwards', async () => {
    const created = await stack.api.post('/apikeys', { name: 'reporting', scope: 'read' });
    expect(created.status).toBe(201);
    const key = created.body.data;
    expect(key.id).toMatch(/^key_[0-9a-z]{26}$/);
    expect(key.key).toMatch(/^crm_live_[A-Za-z0-9]{32}$/);
    expect(key).toMatchObject({ name: 'reporting', scope: 'read', last4: key.key.slice(-4), expires_at: null });

    const listed = await stack.api.get('/apikeys');
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((k: { id: string }) => k.id === key.id);
    expect(entry).toEqual({
      id: key.id,
      name: 'reporting',
      scope: 'read',
      scopes: ['*:read'],
      last4: key.key.slice(-4),
      user_id: null,
      expires_at: null,
      last_used_at: null,
      created_at: key.created_at,
    });
    expect(listed.text).not.toContain(key.key);
    expect(listed.text).not.toContain(key.key.slice(9, 30));
  });

  it('accepts a new key at once and rejects it on the very next request after revocation', async () => {
    const created = await stack.api.post('/apikeys', { name: 'temp', scope: 'read-write' });
    const temp = stack.api.withKey(created.body.data.key);
    expect((await temp.get('/apikeys')).status).toBe(200);

    const revoked = await stack.api.delete(`/apikeys/${created.body.data.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');

    const after = await temp.get('/apikeys');
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ error: { code: 'unauthorized', message: 'This API key has been revoked.' } });
    const listed = await stack.api.get('/apikeys');
    expect(listed.body.data.map((k: { id: string }) => k.id)).not.toContain(created.body.data.id);
    expect((await stack.api.delete(`/apikeys/${created.body.data.id}`)).status).toBe(404);
  });

  it('refuses a revoked key at once on every replica, though each had it in memory', async () => {
    const replicas = [stack.gateway, await stack.startGateway(), await stack.startGateway()];
    const created = await stack.api.post('/apikeys', { name: 'everywhere', scope: 'read' });
    const clients = replicas.map((g) => new ApiClient(g.url, created.body.data.key));
    for (const client of clients) expect((await client.get('/apikeys')).status).toBe(200);
    // Each replica now answers from memory: no key query for the next requests.
    const lookups = async () =>
      Promise.all(
        replicas.map(async (g) => metric(await fetch(g.healthUrl.replace(/\/health$/, '/metrics')).then((r) => r.text()), 'crm_api_key_lookups_total')),
      );
    const before = await lookups();
    for (const client of clients) expect((await client.get('/apikeys')).status).toBe(200);
    expect(await lookups()).toEqual(before);

    expect((await new ApiClient(replicas[1].url, stack.apiKey).delete(`/apikeys/${created.body.data.id}`)).status).toBe(204);
    for (const client of clients) {
      const res = await client.get('/apikeys');
      expect({ url: client.baseUrl, status: res.status }).toEqual({ url: client.baseUrl, status: 401 });
    }
  });

  it('records when a key was last used', async () => {
    const created = await stack.api.post('/apikeys', { name: 'used', scope: 'read' });
    await stack.api.withKey(created.body.data.key).get('/apikeys');
    const entry = async () => (await stack.api.get('/apikeys?limit=200')).body.data.find((k: { id: string }) => k.id === created.body.data.id);
    const used = await eventually(async () => ((await entry()).last_used_at as string | null) ?? undefined);
    expect(Date.parse(used)).toBeGreaterThanOrEqual(Date.parse(created.body.data.created_at));
  });

  it('rejects an expired key and validates expires_at', async () => {
    const past = await stack.api.post('/apikeys', { name: 'old', scope: 'read', expires_at: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'expires_at', code: 'invalid_value' }] });

    // Far enough ahead for the create and a first request on a slow machine; the check after it is exact.
    const soon = new Date(Date.now() + 10_000).toISOString();
    const created = await stack.api.post('/apikeys', { name: 'short', scope: 'read', expires_at: soon });
    expect(created.status).toBe(201);
    expect(created.body.data.expires_at).toBe(soon);
    const client = stack.api.withKey(created.body.data.key);
    expect((await client.get('/apikeys')).status).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(soon) - Date.now() + 50));
    const expired = await client.get('/apikeys');
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toBe('This API key has expired.');
  });

  it('validates the create body and names each bad field', async () => {
    const missing = await stack.api.post('/apikeys', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('validation_failed');
    expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'scope']);

    const bad = await stack.api.post('/apikeys', { name: 'x'.repeat(101), scope: 'admin', colour: 'red' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'name', code: 'invalid_value' }),
        expect.objectContaining({ field: 'scope', code: 'invalid_value' }),
        { field: 'colour', code: 'unknown_field', message: "unknown field 'colour'" },
      ]),
    );
  });

  it('answers 401 for a missing, malformed or unknown key', async () => {
    const none = await stack.api.get('/apikeys', { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('unauthorized');
    expect((await stack.api.get('/apikeys', { key: 'nonsense' })).status).toBe(401);
    expect((await stack.api.get('/apikeys', { key: `crm_live_${'A'.repeat(32)}` })).status).toBe(401);
    const testKey = await stack.api.get('/apikeys', { key: `crm_test_${'A'.repeat(32)}` });
    expect(testKey.status).toBe(401);
    expect(testKey.body.error.message).toContain('test key');
  });

  it('unknown key id answers 404', async () => {
    expect((await stack.api.delete('/apikeys/key_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    expect((await stack.api.delete('/apikeys/whatever')).status).toBe(404);
  });
});
