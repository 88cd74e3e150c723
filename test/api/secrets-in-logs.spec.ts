import { createServer, Server } from 'http';
import { ApiClient, eventually } from '../support/api-client';
import { spawnService, ServiceProcess } from '../support/processes';
import { randomKey, startStack, TestStack } from '../support/stack';

/**
 * Runs a realistic session, failures included, against every process started as in production (debug
 * logging on), then reads everything each process wrote: no API key and no webhook secret may appear.
 */
describe('secrets never reach the logs', () => {
  let stack: TestStack;
  const processes: ServiceProcess[] = [];
  let receiver: Server;
  let receiverUrl: string;

  beforeAll(async () => {
    stack = await startStack({ services: [] });
    const env = { ...stack.env, LOG_LEVEL: 'debug', WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' };
    for (const app of ['contacts', 'deals', 'events', 'webhooks', 'gateway']) processes.push(await spawnService(app, env));
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end('nope')));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  });
  afterAll(async () => {
    receiver?.close();
    for (const p of processes) await p.stop();
    await stack.stop();
  });

  it('keeps API keys and webhook secrets out of every process log', async () => {
    const gateway = processes[processes.length - 1];
    const api = new ApiClient(gateway.url, stack.apiKey);
    // The key that encrypts webhook secrets at rest, as given and as bytes.
    const atRest = stack.env.WEBHOOKS_SECRET_KEYS!.split(':')[1];
    const secrets: string[] = [stack.apiKey, atRest, Buffer.from(atRest, 'base64').toString('hex')];

    const readKey = (await api.post('/apikeys', { name: 'reporting', scope: 'read' })).body.data;
    const spareKey = (await api.post('/apikeys', { name: 'spare', scope: 'read-write' })).body.data;
    secrets.push(readKey.key, spareKey.key);
    expect((await api.delete(`/apikeys/${spareKey.id}`)).status).toBe(204);
    const wrongKey = randomKey();
    secrets.push(wrongKey);

    // Failures of every kind, each carrying a credential somewhere.
    expect((await api.get('/contacts', { key: wrongKey })).status).toBe(401);
    expect((await api.get('/contacts', { key: spareKey.key })).status).toBe(401);
    expect((await api.post('/contacts', { email: 'x@example.com' }, { key: readKey.key })).status).toBe(403);
    expect(
      (await api.post('/contacts', { email: 'not-an-email' }, { headers: { Cookie: `session=${stack.apiKey}`, Authorization: `Bearer ${readKey.key}` } }))
        .status,
    ).toBe(400);
    expect((await api.get('/contacts/cont_00000000000000000000000000')).status).toBe(404);
    expect((await api.post('/contacts', undefined, { rawBody: `{"email": "${stack.apiKey}",` })).status).toBe(400);
    expect(
      (await api.post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { key: null, headers: { Authorization: `Bearer ${wrongKey}` } })).status,
    ).toBe(401);

    // Webhooks: a generated secret, a chosen one, a replaced one; deliveries that fail and are retried.
    const generated = await api.post('/webhooks', { name: 'gen', url: receiverUrl, event_types: ['contact.created'] });
    expect(generated.status).toBe(201);
    const chosen = `whsec_${Buffer.from('a chosen secret of thirty-two b!').toString('base64')}`;
    const explicit = await api.post('/webhooks', { name: 'mine', url: receiverUrl, secret: chosen, event_types: ['contact.created'] });
    expect(explicit.status).toBe(201);
    const replaced = `whsec_${Buffer.from('a replacement secret, 32 bytes!!').toString('base64')}`;
    expect((await api.patch(`/webhooks/${explicit.body.data.id}`, { secret: replaced })).status).toBe(200);
    const badSecret = await api.post('/webhooks', { name: 'bad', url: receiverUrl, secret: `whsec_${stack.apiKey}` });
    expect(badSecret.status).toBe(400);
    for (const secret of [generated.body.secret as string, chosen, replaced]) secrets.push(secret, secret.slice('whsec_'.length));
    expect((await api.post('/contacts', { email: `logs-${Date.now()}@example.com` })).status).toBe(201);
    // The receiver answers 500: the ping reports it (502) and the delivery of contact.created fails and is retried.
    expect((await api.post(`/webhooks/${generated.body.data.id}/ping`)).status).toBe(502);
    await eventually(async () => {
      const deliveries = (await api.get(`/webhooks/${explicit.body.data.id}/deliveries`)).body.data as Array<{ status: string }>;
      return deliveries.some((d) => d.status === 'failed') ? true : undefined;
    });
    const logs = processes.map((p) => p.output()).join('\n');
    // Request lines are there, with id, method and path, and without any header.
    expect(logs).toMatch(/"req":\{"id":"[^"]+","method":"POST","url":"\/contacts"\}/);
    expect(logs.toLowerCase()).not.toContain('x-api-key');
    // An authenticated request's line names the key by its id, never by the key itself.
    const created = logs
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { req?: { method: string; url: string }; res?: { statusCode: number }; key_id?: string })
      .find((line) => line.req?.method === 'POST' && line.req.url === '/contacts' && line.res?.statusCode === 201);
    expect(created?.key_id).toMatch(/^key_[0-9a-z]{26}$/);
    // Refused requests are logged too: the request log runs before the key check.
    expect(logs).toMatch(/"req":\{"id":"[^"]+","method":"GET","url":"\/contacts"\},"res":\{"statusCode":401\}/);
    expect(logs.split('\n').length).toBeGreaterThan(50);
    for (const secret of secrets) expect({ leaked: logs.includes(secret) ? secret.slice(0, 12) : null }).toEqual({ leaked: null });
  });
});
