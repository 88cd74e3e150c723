import { CrmNatsClient } from '@crm/messaging';
import { connect, NatsConnection } from 'nats';
import { firstValueFrom } from 'rxjs';
import { gzipSync } from 'zlib';
import { startStack, TestStack } from '../support/stack';

describe('HTTP edge cases at the gateway', () => {
  let stack: TestStack;
  let nc: NatsConnection;
  beforeAll(async () => {
    stack = await startStack({ services: ['events'], env: { RPC_TIMEOUT_MS: '400' } });
    nc = await connect({ servers: stack.env.NATS_URL });
  });
  afterAll(async () => {
    await nc.close();
    await stack.stop();
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const res = await stack.api.post('/apikeys', undefined, { rawBody: '{"name": "x",' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/^Malformed JSON in request body/);
  });

  it('answers a body over 1 MiB with 413 payload_too_large, and accepts one just under', async () => {
    const big = JSON.stringify({ name: 'x', scope: 'read', pad: 'a'.repeat(1024 * 1024) });
    const res = await stack.api.post('/apikeys', undefined, { rawBody: big });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    // Just under 1 MiB, in strings each within the 100,000-character limit on any one string.
    const underLimit = JSON.stringify({ name: 'x', scope: 'read', pad: Array.from({ length: 10 }, () => 'a'.repeat(100_000)) });
    const validated = await stack.api.post('/apikeys', undefined, { rawBody: underLimit });
    expect(validated.status).toBe(400);
    expect(validated.body.error.details).toEqual([{ field: 'pad', code: 'unknown_field', message: "unknown field 'pad'" }]);
  });

  it('rejects bodies that are not JSON with 415, and non-object JSON with 400', async () => {
    const form = await stack.api.post('/apikeys', undefined, { rawBody: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('unsupported_media_type');
    for (const raw of ['[1,2]', '"text"', '42', 'null']) {
      const res = await stack.api.post('/apikeys', undefined, { rawBody: raw });
      expect({ raw, status: res.status }).toEqual({ raw, status: 400 });
    }
  });

  it('refuses with 415 a body in another charset, a compressed body, and an upload type outside POST /imports', async () => {
    const body = JSON.stringify({ name: 'x', scope: 'read' });
    const latin1 = await stack.api.post('/apikeys', undefined, { rawBody: body, headers: { 'Content-Type': 'application/json; charset=latin1' } });
    const gzipped = await stack.api.post('/apikeys', undefined, { rawBody: gzipSync(body), headers: { 'Content-Encoding': 'gzip' } });
    const csv = await stack.api.post('/apikeys', undefined, { rawBody: 'name,scope\nx,read\n', headers: { 'Content-Type': 'text/csv' } });
    for (const res of [latin1, gzipped, csv]) expect([res.status, res.body.error.code]).toEqual([415, 'unsupported_media_type']);
    expect(gzipped.body.error.message).toContain('Content-Encoding');
    const utf8 = await stack.api.post('/apikeys', undefined, { rawBody: body, headers: { 'Content-Type': 'application/json; charset=UTF-8' } });
    expect(utf8.status).toBe(201);
  });

  it('routes a path whatever its letter case and with a trailing slash', async () => {
    expect((await stack.api.get('/APIKeys/')).status).toBe(200);
  });

  it('answers unknown routes with 404 and known paths with the wrong method with 405 and Allow', async () => {
    const missing = await stack.api.get('/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 'not_found', message: 'No route GET /nothing-here.' } });

    const wrong = await stack.api.request('PUT', '/contacts');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(wrong.body.error.code).toBe('method_not_allowed');
    const stage = await stack.api.request('PATCH', '/pipelines/pipe_x/stages');
    expect(stage.status).toBe(405);
    expect(stage.headers.get('allow')).toBe('POST, PUT');
  });

  it('answers a path parameter over 1,024 characters like an unknown id, and a bad percent-encoding with 400, in the error shape', async () => {
    const long = await stack.api.get(`/contacts/cont_${'0'.repeat(1020)}`, { headers: { 'X-Request-Id': 'too-long-id' } });
    expect([long.status, long.body]).toEqual([
      404,
      { error: { code: 'not_found', message: 'No resource has an id, slug or key longer than 1024 characters.' } },
    ]);
    expect(long.headers.get('x-request-id')).toBe('too-long-id');
    // At the limit the request reaches its route: only the events service runs here, so contacts are unavailable.
    expect((await stack.api.get(`/contacts/cont_${'0'.repeat(1019)}`)).status).toBe(503);

    for (const path of ['/contacts/cont_%ZZ', '/contacts/cont_%C3', '/deals/%ED%A0%80/stage', '/cont%ZZacts']) {
      const res = await stack.api.request(path.endsWith('stage') ? 'POST' : 'GET', path, undefined, { headers: { 'X-Request-Id': 'bad-encoding' } });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { error: { code: 'invalid_request', message: 'The path is not valid percent-encoded UTF-8: send a literal % as %25.' } },
      });
      expect(res.headers.get('x-request-id')).toBe('bad-encoding');
    }

    // Well encoded, but a NUL no store takes: refused as in a body or query, before any service reads it.
    const nul = await stack.api.get('/contacts/cont_%00/changes');
    expect([nul.status, nul.body.error.details]).toEqual([
      400,
      [{ field: 'id', code: 'invalid_characters', message: 'id contains a NUL character or an unpaired UTF-16 surrogate' }],
    ]);
  });

  it('echoes a well-formed X-Request-Id and makes one up otherwise', async () => {
    const given = await stack.api.get('/apikeys', { headers: { 'X-Request-Id': 'client-req-123' } });
    expect(given.headers.get('x-request-id')).toBe('client-req-123');
    const made = await stack.api.get('/apikeys');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await stack.api.get('/apikeys', { headers: { 'X-Request-Id': 'a b\tc' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 503 service_unavailable at once when no service listens', async () => {
    // Only the events service runs in this stack; nothing answers for deals.
    const res = await stack.api.get('/deals');
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({ code: 'service_unavailable', message: 'The deals service is not available; try again shortly.' });
    expect(res.headers.get('retry-after')).toBe('1');
  });

  it('answers 503 when a service takes longer than the RPC timeout, instead of hanging', async () => {
    // A subscriber that never answers stands in for a stuck replica.
    const stuck = nc.subscribe(`${stack.namespace}.rpc.webhooks.>`, { queue: `${stack.namespace}.webhooks` });
    // The flush returns once the server has the subscription; without it the request can find no responder.
    await nc.flush();
    try {
      const res = await stack.api.get('/webhooks');
      expect(res.status).toBe(503);
      expect(res.body.error.message).toBe('The webhooks service did not answer within 400 ms; try again shortly.');
    } finally {
      stuck.unsubscribe();
    }
  });

  it('answers 501 not_implemented for an operation a running service does not offer', async () => {
    // A newer gateway asking an older replica: the service is up, the operation is not there.
    const client = new CrmNatsClient({ servers: stack.env.NATS_URL!, name: 'test', namespace: stack.namespace, timeoutMs: 1000 });
    try {
      const asked = firstValueFrom(client.send('events.events.frobnicate', { ctx: { request_id: 't' }, params: {}, query: {}, body: null }));
      await expect(asked).rejects.toMatchObject({ code: 'not_implemented', message: 'This operation is not implemented yet.' });
    } finally {
      await client.close();
    }
  });
});

describe('GET /health and /metrics', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());
  const internal = async (path: string) => {
    const res = await fetch(stack.gateway.healthUrl.replace(/\/health$/, path));
    return { status: res.status, text: await res.text() };
  };

  it('on the health port, needs no key and answers 200 with every dependency and service up', async () => {
    const res = await internal('/health');
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text);
    expect(body.status).toBe('ok');
    expect(Object.keys(body.details).sort()).toEqual(['contacts', 'database', 'deals', 'events', 'nats', 'outbox', 'redis', 'webhooks']);
    expect(Object.values(body.details).every((d: any) => d.status === 'up')).toBe(true);
  });

  it('serves Prometheus metrics on the health port', async () => {
    await stack.api.get('/contacts');
    const res = await internal('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('crm_http_request_duration_seconds_bucket');
  });

  it('keeps the probes, the status and the metrics off the API port, with or without a key', async () => {
    for (const path of ['/health', '/health/live', '/health/ready', '/metrics']) {
      const anonymous = await stack.api.get(path, { key: null });
      expect({ path, status: anonymous.status, code: anonymous.body?.error?.code }).toEqual({ path, status: 401, code: 'unauthorized' });
      const keyed = await stack.api.get(path);
      expect({ path, status: keyed.status, code: keyed.body?.error?.code }).toEqual({ path, status: 404, code: 'not_found' });
      expect(keyed.text).not.toContain('crm_http_request');
    }
    const unknown = await internal('/contacts');
    expect({ status: unknown.status, code: JSON.parse(unknown.text).error.code }).toEqual({ status: 404, code: 'not_found' });
  });

  it('answers 503 naming the service that is down', async () => {
    await stack.stopService('webhooks');
    const res = await internal('/health');
    expect(res.status).toBe(503);
    const body = JSON.parse(res.text);
    expect(body.status).toBe('error');
    expect(body.error.webhooks).toEqual({ status: 'down', message: 'The webhooks service is not available; try again shortly.' });
    expect(body.details.contacts.status).toBe('up');
  });
});
