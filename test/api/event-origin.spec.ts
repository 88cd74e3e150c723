import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { runBuilt } from '../support/processes';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

const tag = () => randomBytes(4).toString('hex');
const ENVELOPE = ['id', 'type', 'occurred_at', 'actor', 'via', 'request_id', 'data'];

/** Every event says who made the change, through which channel and request, wherever it is shown. */
describe('the origin of events: actor, via and request_id', () => {
  let stack: TestStack;
  let keyId: string;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' } });
    const keys = await stack.api.listAll('/apikeys');
    keyId = keys.find((k) => k.name === 'bootstrap').id;
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  async function receiver(): Promise<Receiver> {
    const r = await Receiver.start();
    receivers.push(r);
    const sub = await stack.api.post('/webhooks', { name: `origin ${tag()}`, url: r.url });
    expect(sub.status).toBe(201);
    return r;
  }

  /** Waits for the logged event of `type` whose data matches, and returns it as GET /events shows it. */
  async function logged(type: string, matches: (data: any) => boolean): Promise<any> {
    return eventually(async () => (await stack.api.listAll(`/events?type=${type}`)).find((e) => matches(e.data)));
  }

  it('shows the calling key, the api channel and the client request id in GET /events and in webhook bodies', async () => {
    const hook = await receiver();
    const requestId = `origin-${tag()}`;
    const email = `origin.${tag()}@example.com`;
    const created = await stack.api.post('/contacts', { email }, { headers: { 'X-Request-Id': requestId } });
    expect(created.status).toBe(201);
    const contactId = created.body.data.id;

    const event = await logged('contact.created', (d) => d.contact_id === contactId);
    expect(Object.keys(event)).toEqual(ENVELOPE);
    expect(event).toMatchObject({ actor: { type: 'api_key', id: keyId }, via: 'api', request_id: requestId, data: { contact_id: contactId, email } });

    const delivery = await eventually(async () => hook.received('contact.created').find((r) => r.json.data.contact_id === contactId));
    expect(Object.keys(delivery.json)).toEqual(ENVELOPE);
    expect(delivery.json).toEqual(event);
  });

  it('attributes API key events to the key that made the request, and the bootstrap key to the system', async () => {
    const requestId = `key-${tag()}`;
    const created = await stack.api.post('/apikeys', { name: 'origin', scope: 'read' }, { headers: { 'X-Request-Id': requestId } });
    expect(created.status).toBe(201);
    const newKey = created.body.data.id;
    expect((await stack.api.delete(`/apikeys/${newKey}`, { headers: { 'X-Request-Id': `${requestId}-revoke` } })).status).toBe(204);

    const creation = await logged('api_key.created', (d) => d.key_id === newKey);
    expect(creation).toMatchObject({ actor: { type: 'api_key', id: keyId }, via: 'api', request_id: requestId });
    const revocation = await logged('api_key.revoked', (d) => d.key_id === newKey);
    expect(revocation).toMatchObject({ actor: { type: 'api_key', id: keyId }, via: 'api', request_id: `${requestId}-revoke` });
    const bootstrap = await logged('api_key.created', (d) => d.key_id === keyId);
    expect(bootstrap).toMatchObject({ actor: { type: 'system', id: 'bootstrap' }, via: 'system', request_id: null });
  });

  it('attributes keys made and revoked with npm run apikey to the system as cli', async () => {
    const created = await runBuilt('apps/gateway/src/cli.js', ['create', '--name', 'from cli', '--scope', 'read'], stack.env);
    expect({ status: created.status, stderr: created.stderr }).toMatchObject({ status: 0 });
    const cliKey = created.stderr.match(/created (key_[0-9a-z]+)/)![1];
    expect((await runBuilt('apps/gateway/src/cli.js', ['revoke', '--id', cliKey], stack.env)).status).toBe(0);
    // The running gateway publishes what the command-line tool recorded in its outbox.
    for (const type of ['api_key.created', 'api_key.revoked']) {
      expect(await logged(type, (d) => d.key_id === cliKey)).toMatchObject({ actor: { type: 'system', id: 'cli' }, via: 'system', request_id: null });
    }
  });

  it('records mcp as the channel of an agent tool call', async () => {
    const requestId = `mcp-${tag()}`;
    const client = new Client({ name: 'crm-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), {
        requestInit: { headers: { 'X-Api-Key': stack.apiKey, 'X-Request-Id': requestId } },
      }),
    );
    try {
      const email = `agent.${tag()}@example.com`;
      const created = (await client.callTool({ name: 'create_record', arguments: { object: 'contacts', data: { email } } })) as {
        isError?: boolean;
        structuredContent?: any;
      };
      expect(created.isError).toBeFalsy();
      const contactId = created.structuredContent.data.id;
      const event = await logged('contact.created', (d) => d.contact_id === contactId);
      expect(event).toMatchObject({ actor: { type: 'api_key', id: keyId }, via: 'mcp', request_id: requestId });
    } finally {
      await client.close();
    }
  });

  it('attributes a clean-up made in reaction to another event to the system, named by the consumer', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: `Origin ${tag()}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const contact = (await stack.api.post('/contacts', { email: `cleanup.${tag()}@example.com` })).body.data;
    const deal = (await stack.api.post('/deals', { name: 'Linked', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, contact_id: contact.id })).body
      .data;
    const activity = (await stack.api.post('/activities', { type: 'call', contact_id: contact.id, deal_id: deal.id })).body.data;
    expect((await stack.api.delete(`/deals/${deal.id}`, { headers: { 'X-Request-Id': `cleanup-${tag()}` } })).status).toBe(204);

    // The contacts service follows deal.deleted (consumer contacts-deal-links) and unlinks the activity.
    const unlinked = await logged('activity.updated', (d) => d.activity_id === activity.id && d.changed?.includes('deal_id'));
    expect(unlinked).toMatchObject({ actor: { type: 'system', id: 'contacts-deal-links' }, via: 'system', request_id: null });
  });

  it('gives a webhook ping the envelope of an event, with the origin of the ping request', async () => {
    const hook = await Receiver.start();
    receivers.push(hook);
    const sub = (await stack.api.post('/webhooks', { name: `ping ${tag()}`, url: hook.url })).body.data;
    const requestId = `ping-${tag()}`;
    expect((await stack.api.post(`/webhooks/${sub.id}/ping`, undefined, { headers: { 'X-Request-Id': requestId } })).status).toBe(200);
    const [ping] = await hook.waitFor(1, 'webhook.ping');
    expect(Object.keys(ping.json)).toEqual(ENVELOPE);
    expect(ping.json).toMatchObject({ actor: { type: 'api_key', id: keyId }, via: 'api', request_id: requestId, data: { webhook_id: sub.id } });
  });

  it('declares actor, via and request_id on every message envelope of /asyncapi.json', async () => {
    const doc = (await stack.api.get('/asyncapi.json', { key: null })).body;
    const messages = Object.values(doc.components.messages) as Array<{ payload: { required: string[]; properties: Record<string, any> } }>;
    expect(messages.length).toBeGreaterThan(0);
    for (const { payload } of messages) {
      expect(Object.keys(payload.properties)).toEqual(ENVELOPE);
      expect(payload.required).toEqual(ENVELOPE);
      expect(payload.properties.via.enum).toEqual(['api', 'batch', 'import', 'mcp', 'capture', 'merge', 'system']);
      expect(payload.properties.request_id.type).toEqual(['string', 'null']);
    }
    const actor = doc.components.messages.contactCreated.payload.properties.actor.allOf[0].$ref.split('/').pop();
    expect(doc.components.schemas[actor]).toMatchObject({
      properties: { type: { enum: ['api_key', 'user', 'subject', 'system'] }, id: { type: ['string', 'null'] } },
      required: ['type', 'id'],
    });
  });
});
