import { eventually } from '../support/api-client';
import { PostgresServer, startPostgresServer } from '../support/processes';
import { randomKey, startStack, TestStack } from '../support/stack';

/**
 * PostgreSQL goes away under a running stack (a private server, stopped with a fast shutdown) and comes
 * back. Every request meanwhile is either answered from what needs no database or refused with
 * 503 service_unavailable and Retry-After: never a 500, never a 401 for a key that is valid.
 */
describe('a PostgreSQL outage', () => {
  let pg: PostgresServer;
  let stack: TestStack;
  let unusedKey: string;

  beforeAll(async () => {
    pg = await startPostgresServer();
    stack = await startStack({ services: ['contacts', 'events'], env: { DATABASE_URL: pg.url('crm_outage') } });
    // A key that exists but this gateway has never verified: during the outage it cannot be checked.
    unusedKey = (await stack.api.post('/apikeys', { name: 'unused', scope: 'read' })).body.data.key;
  });
  afterAll(async () => {
    await pg.start().catch(() => undefined); // if a test stopped it and failed before restarting
    await stack?.stop();
    await pg?.destroy();
  });

  it('answers 503 with Retry-After while the database is down, and recovers by itself when it returns', async () => {
    const created = await stack.api.post('/contacts', { email: 'before@example.com' });
    expect(created.status).toBe(201);
    expect((await stack.api.get('/contacts')).status).toBe(200);

    await pg.stop();
    const during = [
      ['GET /contacts', await stack.api.get('/contacts')],
      [`GET /contacts/:id`, await stack.api.get(`/contacts/${created.body.data.id}`)],
      ['POST /contacts', await stack.api.post('/contacts', { email: 'during@example.com' })],
      ['GET /events', await stack.api.get('/events')],
      ['GET /apikeys', await stack.api.get('/apikeys')],
      ['POST /apikeys', await stack.api.post('/apikeys', { name: 'during', scope: 'read' })],
      ['GET /contacts with a key not verified lately', await stack.api.get('/contacts', { key: unusedKey })],
      ['GET /contacts with an unknown key', await stack.api.get('/contacts', { key: randomKey() })],
    ] as const;
    for (const [what, res] of during) {
      expect({ what, status: res.status, code: res.body?.error?.code }).toEqual({ what, status: 503, code: 'service_unavailable' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(typeof res.body.error.message).toBe('string');
      expect(res.text).not.toMatch(/ECONNREFUSED|terminat|127\.0\.0\.1|postgres/i);
    }
    // What needs no database still answers as usual.
    expect((await stack.api.get('/contacts', { key: null })).status).toBe(401);
    expect((await stack.api.get('/contacts', { key: 'not-a-key' })).status).toBe(401);

    const restartedAt = Date.now();
    await pg.start();
    // Back without a restart of any process (the pools reconnect by themselves, docs/reliability.md): the first
    // read that succeeds is the signal. How soon it comes depends on the machine: reported, not asserted.
    await eventually(async () => ((await stack.api.get('/contacts')).status === 200 ? true : undefined), 120_000, 100);
    const recoveredMs = Date.now() - restartedAt;
    expect((await stack.api.post('/contacts', { email: 'after@example.com' })).status).toBe(201);
    expect((await stack.api.get('/contacts', { key: unusedKey })).status).toBe(200);
    expect((await stack.api.get('/apikeys')).status).toBe(200);
    // The write refused during the outage was not applied.
    const emails = (await stack.api.listAll('/contacts')).map((c) => c.email).sort();
    expect(emails).toEqual(['after@example.com', 'before@example.com']);
    process.stdout.write(`postgres outage: recovered ${recoveredMs} ms after the database accepted connections again\n`);
  });

  it('keeps liveness up and takes readiness down while the database is away, then both recover', async () => {
    const probes = [
      ['gateway', stack.gateway.healthUrl.replace(/\/health$/, '')],
      ...Object.entries(stack.services).map(([name, service]) => [name, service!.healthUrl.replace(/\/health$/, '')]),
    ];
    const statuses = async (path: string) => Promise.all(probes.map(async ([name, base]) => [name, (await fetch(`${base}${path}`)).status] as const));
    const all = (status: number) => probes.map(([name]) => [name, status] as const);
    expect(await statuses('/health/live')).toEqual(all(200));
    expect(await statuses('/health/ready')).toEqual(all(200));

    await pg.stop();
    expect(await statuses('/health/live')).toEqual(all(200));
    expect(await statuses('/health/ready')).toEqual(all(503));
    const ready = await (await fetch(`${stack.gateway.healthUrl}/ready`)).json();
    expect(ready).toMatchObject({ status: 'error', error: { database: { status: 'down' } } });
    expect(JSON.stringify(ready)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);

    await pg.start();
    await eventually(async () => ((await statuses('/health/ready')).every(([, status]) => status === 200) ? true : undefined), 120_000, 100);
    expect(await statuses('/health/live')).toEqual(all(200));
  });
});
