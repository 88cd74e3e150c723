import { connect } from 'net';
import { startStack, TestStack } from '../support/stack';

/** Limits on the shape of any input, and the inputs that once answered 500: each is now a 400 naming the problem. */
describe('input limits', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
  });
  afterAll(() => stack.stop());

  const email = () => `limits-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;

  /** Built as text: a client's own JSON encoder may not survive the depth. */
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;

  it('refuses bodies nested deeper than 32 levels, even thousands deep, without a 500', async () => {
    for (const depth of [40, 1300, 5000]) {
      const res = await stack.api.post('/contacts', undefined, { rawBody: `{"email": "${email()}", "metadata": ${nested(depth)}}` });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details[0]).toMatchObject({ code: 'too_deep' });
      expect(res.body.error.message).toContain('nested deeper than 32 levels');
    }
    const raw = '['.repeat(20_000) + ']'.repeat(20_000);
    const deepArray = await stack.api.post('/contacts', undefined, { rawBody: raw });
    expect(deepArray.status).toBe(400);
  });

  it('refuses arrays over 1000 items and objects over 1000 keys, naming the field', async () => {
    const stages = Array.from({ length: 20_000 }, () => ({ name: 'x', type: 'nope' }));
    const big = await stack.api.post('/pipelines', { name: 'Too many', stages });
    expect(big.status).toBe(400);
    expect(big.body.error.details).toEqual([{ field: 'stages', code: 'too_many_items', message: 'stages has more than 1000 items' }]);

    const keys = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i]));
    const wide = await stack.api.post('/contacts', { email: email(), metadata: keys });
    expect(wide.status).toBe(400);
    expect(wide.body.error.details[0]).toMatchObject({ field: 'metadata', code: 'too_many_keys' });
  });

  it('refuses strings over 100,000 characters', async () => {
    const res = await stack.api.post('/contacts', { email: email(), first_name: 'x'.repeat(100_001) });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toMatchObject({ field: 'first_name', code: 'too_long' });
  });

  it('refuses NUL bytes and lone surrogates in bodies and query strings instead of failing in PostgreSQL', async () => {
    const nul = await stack.api.post('/contacts', { email: email(), first_name: 'Ada\u0000' });
    expect(nul.status).toBe(400);
    expect(nul.body.error.details[0]).toMatchObject({ field: 'first_name', code: 'invalid_characters' });

    const surrogate = await stack.api.post('/contacts', undefined, { rawBody: `{"email": "a\\ud800b@example.com"}` });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.error.details[0]).toMatchObject({ field: 'email', code: 'invalid_characters' });

    const query = await stack.api.get('/contacts?company_id=comp_%00');
    expect(query.status).toBe(400);
    expect(query.body.error.details[0]).toMatchObject({ field: 'company_id', code: 'invalid_characters' });
    const search = await stack.api.get('/deals?contact_id=%00');
    expect(search.status).toBe(400);
  });

  it('refuses __proto__, constructor and prototype as unknown fields, at any depth', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const res = await stack.api.post('/contacts', undefined, { rawBody: `{"email": "${email()}", "${key}": {"admin": true}}` });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: key, code: 'unknown_field', message: `unknown field '${key}'` }]);
    }
    const inner = await stack.api.post('/contacts', undefined, { rawBody: `{"email": "${email()}", "metadata": {"__proto__": {"x": 1}}}` });
    expect(inner.status).toBe(400);
    expect(inner.body.error.details[0].field).toBe('metadata.__proto__');
  });

  it('answers a URL or headers over 16 KiB with 414 or 431 in the error shape, not an empty response', async () => {
    const longUrl = await fetch(`${stack.gateway.url}/contacts?search=${'a'.repeat(20_000)}`, { headers: { 'X-Api-Key': stack.apiKey } });
    expect(longUrl.status).toBe(414);
    expect(await longUrl.json()).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('URL is too long') } });
    const bigHeader = await fetch(`${stack.gateway.url}/contacts`, { headers: { 'X-Api-Key': stack.apiKey, 'X-Padding': 'p'.repeat(20_000) } });
    expect(bigHeader.status).toBe(431);
    expect(await bigHeader.json()).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('headers are too large') } });
    // Within the limit the same query is an ordinary request.
    expect((await stack.api.get(`/contacts?search=${'a'.repeat(200)}`)).status).toBe(200);
  });

  it('answers a request that is not HTTP with 400 in the error shape', async () => {
    const { port } = new URL(stack.gateway.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('HELLO THERE\r\n\r\n'));
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: { code: 'invalid_request' } });
  });

  it('still accepts everything within the limits', async () => {
    const ok = await stack.api.post('/contacts', { email: email(), first_name: 'Zoë 👩‍💻', metadata: { a: { b: { c: [1, 2, 3] } } } });
    expect(ok.status).toBe(201);
  });
});
