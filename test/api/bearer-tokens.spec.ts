import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPairSync, sign as signWith } from 'crypto';
import { createServer, IncomingMessage, request, Server } from 'http';
import { exportJWK, generateKeyPair, JWTPayload, KeyLike, SignJWT } from 'jose';
import { RunningGateway } from '../../apps/gateway/src/gateway.app';
import { ApiClient, ApiResponse, eventually } from '../support/api-client';
import { spawnService } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

const AUDIENCE = 'https://crm.test';

/**
 * The deployment's identity provider, played by the test: its own key pairs, a JWKS endpoint on
 * 127.0.0.1 that serves the keys it is told to, counts the fetches, and can drop connections as an
 * unreachable issuer would.
 */
class LocalIssuer {
  readonly keys = new Map<string, { privateKey: KeyLike; jwk: Record<string, unknown> }>();
  served: string[] = [];
  down = false;
  fetches = 0;
  refused = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<LocalIssuer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = new LocalIssuer(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`);
    server.on('request', (req, res) => issuer.answer(req.url ?? '', res));
    return issuer;
  }

  get issuer(): string {
    return `${this.url}/realms/crm`;
  }
  get jwksUrl(): string {
    return `${this.url}/realms/crm/certs`;
  }

  env(): Record<string, string> {
    return { AUTH_JWT_ISSUER: this.issuer, AUTH_JWT_AUDIENCE: AUDIENCE, AUTH_JWT_JWKS_URL: this.jwksUrl, AUTH_JWT_JWKS_COOLDOWN_SECONDS: '0' };
  }

  async newKey(kid: string): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    this.keys.set(kid, { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } });
  }

  /** A token signed with `kid`'s key (or `signWith`'s, for a forged signature), valid for 5 minutes unless the claims say otherwise. */
  sign(claims: JWTPayload, options: { kid?: string; signWith?: string } = {}): Promise<string> {
    const kid = options.kid ?? 'k1';
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.issuer, aud: AUDIENCE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .sign(this.keys.get(options.signWith ?? kid)!.privateKey);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, res: import('http').ServerResponse): void {
    if (this.down) {
      this.refused++;
      res.socket?.destroy();
      return;
    }
    if (url !== '/realms/crm/certs') return void res.writeHead(404).end();
    this.fetches++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: this.served.map((kid) => this.keys.get(kid)!.jwk) }));
  }
}

describe('bearer tokens from the deployment identity provider', () => {
  let issuer: LocalIssuer;
  let stack: TestStack;
  const tag = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const bearer = (token: string) => ({ key: null, headers: { Authorization: `Bearer ${token}` } });
  const refusedAs = (res: ApiResponse, code: string) => {
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
    expect(res.body.error.details).toEqual([{ field: 'authorization', code, message: res.body.error.message }]);
  };

  beforeAll(async () => {
    issuer = await LocalIssuer.start();
    await issuer.newKey('k1');
    // Never published: what a forger signs with while naming the issuer's kid.
    await issuer.newKey('forger');
    issuer.served = ['k1'];
    stack = await startStack({ env: issuer.env() });
  });
  afterAll(async () => {
    await stack?.stop();
    await issuer?.close();
  });

  it('accepts a valid token on a route, with the permissions of its scope claim', async () => {
    const token = await issuer.sign({ sub: `reader-${tag()}`, scope: 'openid profile contacts:read deals:*' });
    const listed = await stack.api.get('/contacts', bearer(token));
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-ratelimit-limit')).not.toBeNull();

    const refused = await stack.api.post('/contacts', { email: `nope-${tag()}@example.com` }, bearer(token));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('This token lacks the permission contacts:write, which POST /contacts needs.');
    expect(refused.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: 'contacts:write' }]);
    const noScope = await issuer.sign({ sub: `nobody-${tag()}` });
    expect((await stack.api.get('/deals', bearer(noScope))).status).toBe(403);
  });

  it('serves MCP to a token, listing only the tools its scope allows', async () => {
    const token = await issuer.sign({ sub: `agent-${tag()}`, scope: 'contacts:read' });
    const client = new Client({ name: 'bearer-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['query_records', 'get_record']));
      for (const hidden of ['create_record', 'delete_record', 'move_deal_stage']) expect(names).not.toContain(hidden);
      const contacts = (await client.callTool({ name: 'query_records', arguments: { object: 'contacts' } })) as { isError?: boolean };
      expect(contacts.isError).toBeFalsy();
      const deals = (await client.callTool({ name: 'query_records', arguments: { object: 'deals' } })) as { isError?: boolean; structuredContent?: any };
      expect(deals.structuredContent.error.message).toContain('deals:read');
    } finally {
      await client.close();
    }
  });

  it('refuses, saying why: expired, not yet valid, wrong audience, wrong issuer, bad signature, malformed', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sub = `refused-${tag()}`;
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ sub, scope: '*:*', exp: now - 120 }))), 'token_expired');
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ sub, scope: '*:*', nbf: now + 600 }))), 'token_not_yet_valid');
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ sub, scope: '*:*', aud: 'https://other.test' }))), 'wrong_audience');
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ sub, scope: '*:*', iss: `${issuer.url}/realms/other` }))), 'wrong_issuer');
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ sub, scope: '*:*' }, { kid: 'k1', signWith: 'forger' }))), 'bad_signature');
    refusedAs(await stack.api.get('/contacts', bearer('not.a.jwt')), 'malformed_token');
    refusedAs(await stack.api.get('/contacts', bearer(await issuer.sign({ scope: '*:*' }))), 'malformed_token');
    const expired = await stack.api.get('/contacts', bearer(await issuer.sign({ sub, exp: now - 120 })));
    expect(expired.body.error.message).toBe('The bearer token has expired.');
  });

  it('refreshes the keys for an unknown kid: refused until the issuer publishes the new key, accepted after', async () => {
    await issuer.newKey('k2');
    const token = await issuer.sign({ sub: `rotated-${tag()}`, scope: 'contacts:read' }, { kid: 'k2' });
    const before = issuer.fetches;
    refusedAs(await stack.api.get('/contacts', bearer(token)), 'unknown_key');
    expect(issuer.fetches).toBeGreaterThan(before);
    issuer.served = ['k1', 'k2'];
    expect((await stack.api.get('/contacts', bearer(token))).status).toBe(200);
  });

  it('answers a 401 on /mcp with the challenge that names the resource metadata, which describes the API', async () => {
    const expired = await issuer.sign({ sub: 'x', exp: 1 });
    for (const headers of [{}, { Authorization: `Bearer ${expired}` }] as Array<Record<string, string>>) {
      const res = await fetch(`${stack.gateway.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${AUDIENCE}/.well-known/oauth-protected-resource"`);
    }
    // From the configured audience, not the request's Host: a forged Host cannot send a client elsewhere for its token.
    const forged = await new Promise<IncomingMessage>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const { port } = new URL(stack.gateway.url);
      const headers = {
        Host: 'evil.example',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Content-Length': Buffer.byteLength(body),
      };
      request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => res.resume().on('end', () => resolve(res)))
        .on('error', reject)
        .end(body);
    });
    expect([forged.statusCode, forged.headers['www-authenticate']]).toEqual([
      401,
      `Bearer resource_metadata="${AUDIENCE}/.well-known/oauth-protected-resource"`,
    ]);
    // Other routes answer 401 without it: the challenge is the MCP authorization specification's.
    expect((await stack.api.get('/contacts', { key: null })).headers.get('www-authenticate')).toBeNull();

    const metadata = await fetch(`${stack.gateway.url}/.well-known/oauth-protected-resource`);
    expect(metadata.status).toBe(200);
    const document = (await metadata.json()) as any;
    expect(document).toMatchObject({ resource: AUDIENCE, authorization_servers: [issuer.issuer], bearer_methods_supported: ['header'] });
    expect(document.scopes_supported).toEqual(expect.arrayContaining(['contacts:read', 'deals:write', 'objects:delete', 'schema:read', 'capture:write']));
    // What a client asks for: no wildcard, which a client asking for every scope listed would get, no key management, no permission no route needs.
    const unwanted = (document.scopes_supported as string[]).filter(
      (s) => s.includes('*') || s.startsWith('apikeys:') || s === 'capture:read' || s === 'events:write',
    );
    expect(unwanted).toEqual([]);
  });

  it('names the token subject as the actor: the team member whose external_id matches, else the subject', async () => {
    const matched = `alice-${tag()}`;
    const user = (await stack.api.post('/users', { name: 'Alice', email: `alice-${tag()}@example.com`, external_id: matched })).body.data;
    expect(user.external_id).toBe(matched);
    const pipeline = (await stack.api.post('/pipelines', { name: `P ${tag()}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const asAlice = await issuer.sign({ sub: matched, scope: 'contacts:* deals:*' });
    const unmatched = `svc-${tag()}`;
    const asService = await issuer.sign({ sub: unmatched, scope: 'contacts:*' });

    const byAlice = (await stack.api.post('/contacts', { email: `a-${tag()}@example.com` }, bearer(asAlice))).body.data;
    const byService = (await stack.api.post('/contacts', { email: `s-${tag()}@example.com` }, bearer(asService))).body.data;
    const deal = await stack.api.post('/deals', { name: 'Bearer deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id }, bearer(asAlice));
    expect(deal.status).toBe(201);

    expect((await stack.api.get(`/contacts/${byAlice.id}/changes`)).body.data[0].actor).toEqual({ type: 'user', id: user.id });
    expect((await stack.api.get(`/contacts/${byService.id}/changes`)).body.data[0].actor).toEqual({ type: 'subject', id: unmatched });
    const history = (await stack.api.get(`/deals/${deal.body.data.id}/history`)).body.data;
    expect(history[0]).toMatchObject({ changed_by: user.id, changed_by_key_id: null });
    const created = async (id: string) =>
      eventually(async () => (await stack.api.listAll('/events?type=contact.created')).find((e) => e.data.contact_id === id));
    expect((await created(byAlice.id)).actor).toEqual({ type: 'user', id: user.id });
    expect((await created(byService.id)).actor).toEqual({ type: 'subject', id: unmatched });
  });

  it('keeps external_id unique among team members, 1 to 255 characters, and clears it with null', async () => {
    const id = `dup-${tag()}`;
    const first = await stack.api.post('/users', { name: 'One', email: `one-${tag()}@example.com`, external_id: id });
    expect(first.status).toBe(201);
    const second = await stack.api.post('/users', { name: 'Two', email: `two-${tag()}@example.com`, external_id: id });
    expect([second.status, second.body.error.details[0]]).toEqual([409, expect.objectContaining({ field: 'external_id', code: 'duplicate' })]);
    for (const bad of ['', 'x'.repeat(256), 7]) {
      const res = await stack.api.post('/users', { name: 'Bad', email: `bad-${tag()}@example.com`, external_id: bad });
      expect([res.status, res.body.error.details[0].field]).toEqual([400, 'external_id']);
    }
    expect((await stack.api.get(`/users?external_id=${id}`)).body.data.map((u: { id: string }) => u.id)).toEqual([first.body.data.id]);
    const cleared = await stack.api.patch(`/users/${first.body.data.id}`, { external_id: null });
    expect([cleared.status, cleared.body.data.external_id]).toEqual([200, null]);
  });

  it('keeps the API key path as it was beside tokens', async () => {
    expect((await stack.api.get('/contacts')).status).toBe(200);
    const key = (await stack.api.post('/apikeys', { name: 'beside tokens', scope: 'read' })).body.data.key;
    const viaMcp = await stack.api.post(
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { key: null, headers: { Authorization: `Bearer ${key}`, Accept: 'application/json, text/event-stream' } },
    );
    expect(viaMcp.status).toBe(200);
    const wrong = await stack.api.get('/contacts', { key: 'crm_live_wrongwrongwrongwrongwrongwrongwrong' });
    expect(wrong.body.error).toEqual({ code: 'unauthorized', message: 'Invalid API key.' });
  });

  it('limits each subject on its own bucket, as each key has', async () => {
    const limited = await stack.startGateway({ RATE_LIMIT_BURST: '3', RATE_LIMIT_PER_MINUTE: '1' });
    const api = new ApiClient(limited.url, stack.apiKey);
    const busy = `busy-${tag()}`;
    const first = await issuer.sign({ sub: busy, scope: '*:read' });
    for (let i = 0; i < 3; i++) expect((await api.get('/contacts', bearer(first))).status).toBe(200);
    const over = await api.get('/contacts', bearer(first));
    expect([over.status, over.body.error.code]).toEqual([429, 'rate_limit_exceeded']);
    // Another token of the same subject shares the bucket; another subject from the same address has its own.
    const sameSubject = await issuer.sign({ sub: busy, scope: '*:read', jti: 'again' });
    expect((await api.get('/contacts', bearer(sameSubject))).status).toBe(429);
    expect((await api.get('/contacts', bearer(await issuer.sign({ sub: `idle-${tag()}`, scope: '*:read' })))).status).toBe(200);
  });

  it('starts while the issuer is unreachable: API keys work, tokens get 503 with Retry-After until the issuer answers', async () => {
    issuer.down = true;
    let late: RunningGateway | undefined;
    try {
      late = await stack.startGateway();
      const api = new ApiClient(late.url, stack.apiKey);
      expect((await api.get('/contacts')).status).toBe(200);
      const token = await issuer.sign({ sub: `early-${tag()}`, scope: 'contacts:read' });
      const refused = issuer.refused;
      const early = await api.get('/contacts', bearer(token));
      expect([early.status, early.body.error.code]).toEqual([503, 'service_unavailable']);
      expect(Number(early.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(issuer.refused).toBeGreaterThan(refused);
    } finally {
      issuer.down = false;
    }
    const api = new ApiClient(late!.url, stack.apiKey);
    const token = await issuer.sign({ sub: `later-${tag()}`, scope: 'contacts:read' });
    await eventually(async () => ((await api.get('/contacts', bearer(token))).status === 200 ? true : undefined), 120_000, 250);
  });

  it('answers 404 for the metadata, and treats a bearer token as no key, where tokens are not configured', async () => {
    const plain = await stack.startGateway({ AUTH_JWT_ISSUER: '', AUTH_JWT_AUDIENCE: '', AUTH_JWT_JWKS_URL: '' });
    const res = await fetch(`${plain.url}/.well-known/oauth-protected-resource`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe('not_found');
    const token = await issuer.sign({ sub: 'x', scope: '*:*' });
    const refused = await new ApiClient(plain.url, stack.apiKey).get('/contacts', bearer(token));
    expect([refused.status, refused.headers.get('www-authenticate')]).toEqual([401, null]);
  });

  it('never writes a token to the logs', async () => {
    const gateway = await spawnService('gateway', { ...stack.env, ...issuer.env(), LOG_LEVEL: 'debug' });
    try {
      const api = new ApiClient(gateway.url, stack.apiKey);
      const sub = `logged-${tag()}`;
      const tokens = [
        await issuer.sign({ sub, scope: 'contacts:read' }),
        await issuer.sign({ sub, scope: 'contacts:read', exp: Math.floor(Date.now() / 1000) - 120 }),
        await issuer.sign({ sub, scope: 'contacts:read' }, { kid: 'k1', signWith: 'forger' }),
      ];
      expect((await api.get('/contacts', bearer(tokens[0]))).status).toBe(200);
      expect((await api.post('/contacts', { email: 'not-an-email' }, bearer(tokens[0]))).status).toBe(403);
      expect((await api.get('/contacts', bearer(tokens[1]))).status).toBe(401);
      expect((await api.get('/contacts', bearer(tokens[2]))).status).toBe(401);
      expect((await api.post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, bearer(tokens[1]))).status).toBe(401);
      // A last request after every one above has been answered: once its line is in the log, theirs are too.
      const marker = `logged-marker-${tag()}`;
      expect((await api.get(`/contacts?limit=1&marker=${marker}`)).status).toBeLessThan(500);
      const output = await eventually(async () => (gateway.output().includes(marker) ? gateway.output() : undefined));
      expect(output).toContain(`"subject":"${sub}"`);
      expect(output.match(/"status(Code)?":401/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
      for (const token of tokens) {
        expect(output).not.toContain(token);
        expect(output).not.toContain(token.split('.')[2]);
      }
    } finally {
      await gateway.stop();
    }
  });
  it('reads the permissions from the claim AUTH_JWT_PERMISSIONS_CLAIM names instead of scope, as roles an identity provider maps', async () => {
    const roles = await stack.startGateway({ AUTH_JWT_PERMISSIONS_CLAIM: 'resource_access.crm-api.roles' });
    const api = new ApiClient(roles.url, stack.apiKey);
    const sub = `roles-${tag()}`;
    // The scope a client asked for grants nothing here: what the user was given does.
    const token = await issuer.sign({ sub, scope: 'openid *:*', resource_access: { 'crm-api': { roles: ['contacts:read', 'offline_access'] } } });
    expect((await api.get('/contacts', bearer(token))).status).toBe(200);
    const refused = await api.post('/contacts', { email: `roles-${tag()}@example.com` }, bearer(token));
    expect([refused.status, refused.body.error.details]).toEqual([403, [{ field: 'permission', code: 'missing_permission', message: 'contacts:write' }]]);
    const noRoles = await issuer.sign({ sub, scope: '*:*' });
    expect((await api.get('/contacts', bearer(noRoles))).status).toBe(403);
    // Without the claim, or with only part of its path, a token has no permissions.
    const inherited = await issuer.sign({ sub, scope: '*:*', resource_access: {} });
    expect((await api.get('/contacts', bearer(inherited))).status).toBe(403);
  });

  it('refuses a token whose key cannot be used (RSA under 2048 bits) with 401 unusable_key, and other tokens keep working', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    issuer.keys.set('weak', { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid: 'weak', alg: 'RS256', use: 'sig' } });
    const served = issuer.served;
    issuer.served = [...served, 'weak'];
    try {
      // jose will not sign with such a key either, so the token is put together by hand.
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const signed = `${part({ alg: 'RS256', kid: 'weak', typ: 'JWT' })}.${part({ iss: issuer.issuer, aud: AUDIENCE, sub: `weak-${tag()}`, scope: '*:*', iat: now, exp: now + 300 })}`;
      const weak = `${signed}.${signWith('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
      for (let i = 0; i < 2; i++) refusedAs(await stack.api.get('/contacts', bearer(weak)), 'unusable_key');
      const good = await issuer.sign({ sub: `beside-weak-${tag()}`, scope: 'contacts:read' });
      const answer = await stack.api.get('/contacts', bearer(good));
      expect([answer.status, answer.headers.get('retry-after')]).toEqual([200, null]);
    } finally {
      issuer.served = served;
    }
  });

  // Last: it leaves this address's bucket empty on a gateway that refills it once a minute.
  it("charges the address's bucket before verifying a token, and moves the charge to the subject once verified", async () => {
    const limited = await stack.startGateway({ RATE_LIMIT_BURST: '2', RATE_LIMIT_PER_MINUTE: '1' });
    const api = new ApiClient(limited.url, stack.apiKey);
    // Each good token gives the address its token back: more subjects than the address's burst all pass.
    for (let i = 0; i < 4; i++) {
      const token = await issuer.sign({ sub: `many-${i}-${tag()}`, scope: 'contacts:read' });
      expect((await api.get('/contacts', bearer(token))).status).toBe(200);
    }
    let spent = 0;
    while ((await api.get('/contacts', { key: 'crm_live_wrongwrongwrongwrongwrongwrongwrong' })).status !== 429) expect(++spent).toBeLessThan(5);
    // The address has nothing left: a token is not verified, so not even an unknown kid makes the issuer's keys be fetched.
    await issuer.newKey('late');
    const fetches = issuer.fetches;
    const unverified = await api.get('/contacts', bearer(await issuer.sign({ sub: `late-${tag()}`, scope: 'contacts:read' }, { kid: 'late' })));
    expect([unverified.status, unverified.body.error.code, issuer.fetches]).toEqual([429, 'rate_limit_exceeded', fetches]);
    const good = await api.get('/contacts', bearer(await issuer.sign({ sub: `fresh-${tag()}`, scope: 'contacts:read' })));
    expect([good.status, good.body.error?.code]).toEqual([429, 'rate_limit_exceeded']);
  });
});
