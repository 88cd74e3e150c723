import { createCrmClient, CrmClient, Filter, queryAll } from '@crm/sdk';
import { readFileSync } from 'fs';
import { join } from 'path';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

describe('the published contract and the typed SDK', () => {
  let stack: TestStack;
  let receiver: Receiver;
  let crm: CrmClient;
  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' } });
    receiver = await Receiver.start();
    crm = createCrmClient({ baseUrl: stack.api.baseUrl, apiKey: stack.apiKey });
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('serves GET /openapi.json without a key: the document committed in libs/sdk', async () => {
    const res = await fetch(`${stack.api.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual(JSON.parse(readFileSync(join(__dirname, '../../libs/sdk/openapi.json'), 'utf8')));
  });

  it('serves the reference UI at /docs without a key', async () => {
    const res = await fetch(`${stack.api.baseUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const page = await res.text();
    expect(page).toContain('swagger-ui');
    const init = await fetch(`${stack.api.baseUrl}/docs/swagger-ui-init.js`);
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('/contacts/{id}');
    // The UI's own files, served from the swagger-ui-dist package.
    const bundle = await fetch(`${stack.api.baseUrl}/docs/swagger-ui-bundle.js`);
    expect([bundle.status, bundle.headers.get('content-type')]).toEqual([200, expect.stringContaining('javascript')]);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  it('queries through the SDK helpers, typed by path, page after page', async () => {
    const tag = `sdkq${Date.now()}`;
    const made: string[] = [];
    for (const score of [5, 50, 80, 95])
      made.push((await crm.POST('/contacts', { body: { email: `${score}.${tag}@example.com`, icp_score: score } })).data!.data.id);
    const filter: Filter<'email' | 'icp_score'> = { $and: [{ email: { $ends_with: `${tag}@example.com` } }, { icp_score: { $gte: 50 } }] };
    // @ts-expect-error a path the helper was not told of is a compile error
    const misspelt: Filter<'email' | 'icp_score'> = { emial: 'x' };
    expect(misspelt).toBeDefined();
    const seen: Array<Record<string, unknown>> = [];
    for await (const item of queryAll(crm, 'contacts', { filter, sort: [{ field: 'icp_score', direction: 'desc' }], fields: ['icp_score'], limit: 1 }))
      seen.push(item);
    expect(seen).toEqual([
      { id: made[3], icp_score: 95 },
      { id: made[2], icp_score: 80 },
      { id: made[1], icp_score: 50 },
    ]);
    await expect(queryAll(crm, 'contacts', { filter: { nope: 1 } }).next()).rejects.toMatchObject({
      status: 400,
      error: { error: { code: 'validation_failed' } },
    });
  });

  it('runs the walkthrough through the SDK: contact, pipeline, deal, stage move, events, webhook', async () => {
    const webhook = await crm.POST('/webhooks', { body: { name: 'sdk', url: receiver.url, event_types: ['deal.stage_changed'] } });
    expect(webhook.response.status).toBe(201);
    expect(webhook.data!.secret).toMatch(/^whsec_/);

    const contact = await crm.POST('/contacts', { body: { email: 'ada@example.com', first_name: 'Ada', stage: 'lead' } });
    expect(contact.error).toBeUndefined();
    const contactId = contact.data!.data.id;

    const pipeline = await crm.POST('/pipelines', {
      body: {
        name: 'Sales',
        stages: [
          { name: 'Qualified', type: 'open' },
          { name: 'Won', type: 'won' },
          { name: 'Lost', type: 'lost' },
        ],
      },
    });
    const [qualified, won] = pipeline.data!.data.stages;

    const deal = await crm.POST('/deals', {
      body: { name: 'Pilot', pipeline_id: pipeline.data!.data.id, stage_id: qualified.id, contact_id: contactId, value: 120000, currency: 'EUR' },
    });
    expect(deal.response.status).toBe(201);
    const dealId = deal.data!.data.id;

    const moved = await crm.POST('/deals/{id}/stage', { params: { path: { id: dealId } }, body: { stage_id: won.id } });
    expect(moved.data!.data).toMatchObject({ stage_id: won.id, status: 'won' });
    expect(moved.data!.included.map((r) => r.type)).toContain('contact');

    const fetched = await crm.GET('/contacts/{id}', { params: { path: { id: contactId } } });
    expect(fetched.data!.data.email).toBe('ada@example.com');

    const missing = await crm.GET('/deals/{id}', { params: { path: { id: 'deal_01aaaaaaaaaaaaaaaaaaaaaaaa' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.error.code).toBe('not_found');

    // Polling the log with the cursor, as a consumer would.
    const seen = await eventually(async () => {
      const page = await crm.GET('/events', { params: { query: { type: 'deal.stage_changed', limit: 50 } } });
      return page.data!.data.length ? page.data! : undefined;
    });
    expect(seen.data[0].data).toMatchObject({ deal_id: dealId, to_stage_id: won.id });
    const next = await crm.GET('/events', { params: { query: { type: 'deal.stage_changed', cursor: seen.next_cursor } } });
    expect(next.data!.data).toEqual([]);

    const [delivery] = await receiver.waitFor(1, 'deal.stage_changed');
    expect(delivery.json.data.deal_id).toBe(dealId);
    const deliveries = await eventually(async () => {
      const page = await crm.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhook.data!.data.id } } });
      return page.data!.data.some((d) => d.status === 'success') ? page.data!.data : undefined;
    });
    expect(deliveries[0].event_id).toBe(seen.data[0].id);
  });
});
