import { startStack, TestStack } from '../support/stack';

/** Scope rules are the gateway's: they hold whatever the owning service would answer. */
describe('API key scopes', () => {
  let stack: TestStack;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startStack({ services: ['events'] });
    for (const scope of ['read', 'read-write', 'capture-only']) {
      const res = await stack.api.post('/apikeys', { name: scope, scope });
      keys[scope] = res.body.data.key;
    }
  });
  afterAll(() => stack.stop());

  const as = (scope: string) => stack.api.withKey(keys[scope]);

  it('read keys may call GET endpoints only', async () => {
    expect((await as('read').get('/apikeys')).status).toBe(200);
    expect((await as('read').get('/events')).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/apikeys'],
      ['DELETE', '/apikeys/key_01aaaaaaaaaaaaaaaaaaaaaaaa'],
      ['POST', '/contacts'],
      ['PATCH', '/deals/deal_01aaaaaaaaaaaaaaaaaaaaaaaa'],
      ['PUT', '/pipelines/pipe_01aaaaaaaaaaaaaaaaaaaaaaaa/stages'],
      ['POST', '/capture'],
    ]) {
      const res = await as('read').request(method, path, {});
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 403, code: 'forbidden' });
    }
    const forbidden = await as('read').post('/apikeys', { name: 'x', scope: 'read' });
    expect(forbidden.body.error.message).toBe("This key's scope (read) does not allow POST /apikeys.");
  });

  it('capture-only keys may call POST /capture and nothing else', async () => {
    for (const [method, path] of [
      ['GET', '/apikeys'],
      ['GET', '/events'],
      ['POST', '/contacts'],
      ['GET', '/capture'],
    ]) {
      const res = await as('capture-only').request(method, path, method === 'GET' ? undefined : {});
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
    }
    const capture = await as('capture-only').post('/capture', { email: 'lead@example.com' });
    expect(capture.status).not.toBe(403);
    expect(capture.status).not.toBe(401);
  });

  it('read-write keys may call everything, including capture', async () => {
    const created = await as('read-write').post('/apikeys', { name: 'made by rw', scope: 'read' });
    expect(created.status).toBe(201);
    expect((await as('read-write').delete(`/apikeys/${created.body.data.id}`)).status).toBe(204);
    expect((await as('read-write').get('/events')).status).toBe(200);
    const capture = await as('read-write').post('/capture', { email: 'lead@example.com' });
    expect([401, 403]).not.toContain(capture.status);
  });

  it('forbids before the service sees the request', async () => {
    const before = (await stack.api.listAll('/apikeys')).length;
    const res = await as('read').post('/apikeys', { name: 'sneaky', scope: 'read-write' });
    expect(res.status).toBe(403);
    expect((await stack.api.listAll('/apikeys')).length).toBe(before);
  });
});
