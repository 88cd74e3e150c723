import { ApiClient, ApiResponse } from '../support/api-client';
import { TokenIssuer } from '../support/local-issuer';
import { startStack, TestStack } from '../support/stack';

/**
 * The grant ceiling (docs/api.md, "API keys"): a key or bearer token creates keys holding only what it
 * holds itself, names a user only with users:write or as that user, revokes only keys holding no more
 * than it, and a key made with a token expires with the token. And a stored Idempotency-Key answer is
 * given only to a caller the route's permission lets in.
 */
describe('API key grant ceiling', () => {
  let stack: TestStack;
  let issuer: TokenIssuer;
  let n = 0;
  const tag = () => `${Date.now().toString(36)}${n++}`;
  const bearer = (token: string) => ({ key: null, headers: { Authorization: `Bearer ${token}` } });

  /** A key holding `scopes` (and `user_id`), made with the bootstrap key. */
  const keyWith = async (scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; api: ApiClient }> => {
    const res = await stack.api.post('/apikeys', { name: `grant ${scopes.join(' ')}`, scopes, ...extra });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return { id: res.body.data.id, api: stack.api.withKey(res.body.data.key) };
  };
  const lacks = (res: ApiResponse, permission: string) => {
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(res.body.error.message).toContain(permission);
    expect(res.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: permission }]);
  };
  const mint = (api: ApiClient, body: Record<string, unknown>) => api.post('/apikeys', { name: `minted ${tag()}`, ...body });

  beforeAll(async () => {
    issuer = await TokenIssuer.start();
    stack = await startStack({ env: issuer.env() });
  });
  afterAll(async () => {
    await stack?.stop();
    await issuer?.close();
  });

  it('refuses a key holding only apikeys:write a key with more: read-write, read, or any permission it lacks', async () => {
    const { api } = await keyWith(['apikeys:write']);
    // `*:*` stands for every resource's read, write and delete: contacts:read is the first it lacks.
    lacks(await mint(api, { scope: 'read-write' }), 'contacts:read');
    lacks(await mint(api, { scope: 'read' }), 'contacts:read');
    lacks(await mint(api, { scope: 'capture-only' }), 'capture:write');
    lacks(await mint(api, { scopes: ['apikeys:write', 'apikeys:read'] }), 'apikeys:read');
    lacks(await mint(api, { scopes: ['*:write'] }), 'contacts:write');
    const same = await mint(api, { scopes: ['apikeys:write'] });
    expect(same.status).toBe(201);
    expect(same.body.data.scopes).toEqual(['apikeys:write']);
  });

  it('refuses a *:write key *:* and contacts:delete, and lets it grant any write', async () => {
    const { api } = await keyWith(['*:write']);
    lacks(await mint(api, { scopes: ['*:*'] }), 'contacts:read');
    lacks(await mint(api, { scope: 'read-write' }), 'contacts:read');
    lacks(await mint(api, { scopes: ['contacts:delete'] }), 'contacts:delete');
    lacks(await mint(api, { scopes: ['contacts:*'] }), 'contacts:read');
    for (const scopes of [['contacts:write'], ['*:write'], ['objects.invoices:write', 'capture:write']]) {
      expect((await mint(api, { scopes })).status).toBe(201);
    }
    expect((await mint(api, { scope: 'capture-only' })).status).toBe(201);
  });

  it('lets a contacts:read deals:* key grant deals:read but not contacts:write', async () => {
    const { api } = await keyWith(['contacts:read', 'deals:*', 'apikeys:write']);
    const narrower = await mint(api, { scopes: ['deals:read', 'contacts:read'] });
    expect(narrower.status).toBe(201);
    expect((await stack.api.withKey(narrower.body.data.key).get('/deals')).status).toBe(200);
    expect((await mint(api, { scopes: ['deals:*'] })).status).toBe(201);
    lacks(await mint(api, { scopes: ['deals:read', 'contacts:write'] }), 'contacts:write');
    lacks(await mint(api, { scopes: ['pipelines:read'] }), 'pipelines:read');
  });

  it('reads objects and * as wildcards the way permissions are checked', async () => {
    const all = (await keyWith(['objects:read', 'apikeys:write'])).api;
    expect((await mint(all, { scopes: ['objects.invoices:read'] })).status).toBe(201);
    expect((await mint(all, { scopes: ['objects:read'] })).status).toBe(201);
    lacks(await mint(all, { scopes: ['objects.invoices:write'] }), 'objects.invoices:write');

    const one = (await keyWith(['objects.invoices:*', 'apikeys:write'])).api;
    expect((await mint(one, { scopes: ['objects.invoices:read', 'objects.invoices:delete'] })).status).toBe(201);
    // `objects` stands for every custom object, the ones made later too: one object's permission is not it.
    lacks(await mint(one, { scopes: ['objects:read'] }), 'objects:read');
    lacks(await mint(one, { scopes: ['objects.orders:read'] }), 'objects.orders:read');

    const reader = (await keyWith(['*:read', 'apikeys:write'])).api;
    expect((await mint(reader, { scopes: ['objects.invoices:read', 'objects:read', 'contacts:read'] })).status).toBe(201);
    expect((await mint(reader, { scope: 'read' })).status).toBe(201);
    lacks(await mint(reader, { scopes: ['*:*'] }), 'contacts:write');
  });

  it('sets user_id only with users:write or for the caller itself', async () => {
    const user = await stack.api.post('/users', { name: 'Grant', email: `grant-${tag()}@example.com` });
    const other = await stack.api.post('/users', { name: 'Other', email: `other-${tag()}@example.com` });
    expect([user.status, other.status]).toEqual([201, 201]);
    const userId = user.body.data.id;

    const plain = (await keyWith(['apikeys:write', 'contacts:read'])).api;
    lacks(await mint(plain, { scopes: ['contacts:read'], user_id: userId }), 'users:write');
    expect((await mint(plain, { scopes: ['contacts:read'] })).status).toBe(201);

    const admin = (await keyWith(['apikeys:write', 'users:write', 'contacts:read'])).api;
    const forUser = await mint(admin, { scopes: ['contacts:read'], user_id: userId });
    expect(forUser.status).toBe(201);
    expect(forUser.body.data.user_id).toBe(userId);

    const own = (await keyWith(['apikeys:write', 'contacts:read'], { user_id: userId })).api;
    const ownKey = await mint(own, { scopes: ['contacts:read'], user_id: userId });
    expect(ownKey.status).toBe(201);
    expect(ownKey.body.data.user_id).toBe(userId);
    lacks(await mint(own, { scopes: ['contacts:read'], user_id: other.body.data.id }), 'users:write');
  });

  it('refuses to revoke a key holding more than the caller, and revokes one holding no more', async () => {
    const { api } = await keyWith(['apikeys:*', 'contacts:read']);
    const broader = await keyWith(['contacts:*']);
    const refused = await api.delete(`/apikeys/${broader.id}`);
    lacks(refused, 'contacts:write');
    expect((await broader.api.get('/contacts')).status).toBe(200);
    const bootstrap = (await stack.api.get('/apikeys?limit=200')).body.data.find((k: { name: string }) => k.name === 'bootstrap');
    lacks(await api.delete(`/apikeys/${bootstrap.id}`), 'contacts:write');

    const narrower = await keyWith(['contacts:read']);
    expect((await api.delete(`/apikeys/${narrower.id}`)).status).toBe(204);
    expect((await narrower.api.get('/contacts')).status).toBe(401);
    // A key already revoked, or none, is still 404 whatever it held.
    expect((await api.delete(`/apikeys/${narrower.id}`)).status).toBe(404);
  });

  it('makes a bearer token grant only what it holds, and its keys expire no later than it', async () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    const token = await issuer.sign({ sub: `grantor-${tag()}`, scope: 'openid apikeys:write contacts:read', exp });
    const tokenExpiry = new Date(exp * 1000).toISOString();

    const refused = await stack.api.post('/apikeys', { name: 'from token', scope: 'read-write' }, bearer(token));
    lacks(refused, 'contacts:write');
    expect(refused.body.error.message).toMatch(/^This token lacks the permission contacts:write/);

    const defaulted = await stack.api.post('/apikeys', { name: 'from token', scopes: ['contacts:read'] }, bearer(token));
    expect(defaulted.status).toBe(201);
    expect(defaulted.body.data.expires_at).toBe(tokenExpiry);

    const sooner = new Date(exp * 1000 - 60_000).toISOString();
    const earlier = await stack.api.post('/apikeys', { name: 'from token', scopes: ['contacts:read'], expires_at: sooner }, bearer(token));
    expect(earlier.status).toBe(201);
    expect(earlier.body.data.expires_at).toBe(sooner);

    const later = await stack.api.post(
      '/apikeys',
      { name: 'from token', scopes: ['contacts:read'], expires_at: new Date(exp * 1000 + 1000).toISOString() },
      bearer(token),
    );
    expect(later.status).toBe(403);
    expect(later.body.error.code).toBe('forbidden');
    expect(later.body.error.details).toEqual([{ field: 'expires_at', code: 'beyond_token_expiry', message: later.body.error.message }]);
    expect(later.body.error.message).toContain(tokenExpiry);

    // A key made with a key keeps the expiry it asks for, or none.
    expect((await mint(stack.api, { scope: 'read' })).body.data.expires_at).toBeNull();
  });

  it("answers a stored Idempotency-Key response only to a caller the route's permission lets in", async () => {
    const sub = `replay-${tag()}`;
    const writer = await issuer.sign({ sub, scope: 'contacts:read contacts:write' });
    const reader = await issuer.sign({ sub, scope: 'contacts:read' });
    const key = `grant-${tag()}`;
    const body = { email: `replay-${tag()}@example.com`, first_name: 'Stored' };
    const first = await stack.api.post('/contacts', body, { key: null, headers: { Authorization: `Bearer ${writer}`, 'Idempotency-Key': key } });
    expect(first.status).toBe(201);

    // Same subject, same store, same request: the reader's token may not write contacts, so it is not shown the answer.
    const again = await stack.api.post('/contacts', body, { key: null, headers: { Authorization: `Bearer ${reader}`, 'Idempotency-Key': key } });
    lacks(again, 'contacts:write');
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.text).not.toContain(first.body.data.id);

    const replayed = await stack.api.post('/contacts', body, { key: null, headers: { Authorization: `Bearer ${writer}`, 'Idempotency-Key': key } });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(first.body.data.id);

    // A token of the subject with other permissions is another request: routes that check inside (MCP's
    // tools) must not answer it with what a token of different permissions was answered.
    const wider = await issuer.sign({ sub, scope: 'contacts:* deals:read' });
    const reused = await stack.api.post('/contacts', body, { key: null, headers: { Authorization: `Bearer ${wider}`, 'Idempotency-Key': key } });
    expect([reused.status, reused.body.error?.code]).toEqual([422, 'idempotency_key_reused']);

    // A refused request does not claim its key: the caller may send it again once it holds the permission.
    const fresh = `grant-${tag()}`;
    const other = { email: `replay-${tag()}@example.com` };
    lacks(await stack.api.post('/contacts', other, { key: null, headers: { Authorization: `Bearer ${reader}`, 'Idempotency-Key': fresh } }), 'contacts:write');
    const allowed = await stack.api.post('/contacts', other, { key: null, headers: { Authorization: `Bearer ${writer}`, 'Idempotency-Key': fresh } });
    expect(allowed.status).toBe(201);
    expect(allowed.headers.get('idempotent-replayed')).toBeNull();
  });
});
