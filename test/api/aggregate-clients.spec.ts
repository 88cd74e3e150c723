import { randomBytes } from 'crypto';
import { aggregate, createCrmClient } from '@crm/sdk';
import { startStack, TestStack } from '../support/stack';

/** Aggregation of a custom object's records (their values, a reference into the deals service), over MCP, and its scope. */
describe('Aggregating custom object records, over MCP, by scope', () => {
  let stack: TestStack;
  const tag = randomBytes(3).toString('hex');
  const projects = `projects_${tag}`;
  const specs = [
    { title: 'A', budget: 500, phase: 'plan', deal: 'big' },
    { title: 'B', budget: 1500, phase: 'build', deal: 'small' },
    { title: 'C', budget: 2500, phase: 'plan', deal: 'big' },
    { title: 'D', phase: 'done' },
  ];

  beforeAll(async () => {
    // At most two related records per relation path, so the limit on paths into another service shows with a few.
    stack = await startStack({ services: ['contacts', 'deals'], env: { QUERY_RELATED_IDS_MAX: '2' } });
    const create = async (path: string, body: unknown) => {
      const res = await stack.api.post(path, body);
      if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
      return res.body.data;
    };
    await create('/objects', {
      name: 'Project',
      slug: projects,
      fields: [
        { name: 'title', type: 'string' },
        { name: 'budget', type: 'number' },
        { name: 'phase', type: 'enum', enum_values: ['plan', 'build', 'done'] },
        { name: 'deal', type: 'reference', reference_target: 'deals' },
      ],
    });
    const pipeline = (await stack.api.post('/pipelines', { name: 'P', stages: [{ name: 'New', type: 'open' }] })).body.data;
    const deals: Record<string, string> = {
      big: (await create('/deals', { name: 'Big', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 90_000 })).id,
      small: (await create('/deals', { name: 'Small', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 100 })).id,
    };
    for (const { deal, ...values } of specs) await create(`/objects/${projects}/records`, { values: { ...values, ...(deal ? { deal: deals[deal] } : {}) } });
  });
  afterAll(() => stack?.stop());

  it('groups a custom object by its values and by a path through its reference into the deals service', async () => {
    const res = await stack.api.post(`/objects/${projects}/records/aggregate`, {
      group_by: ['values.phase'],
      metrics: { n: { op: 'count' }, budget: { op: 'sum', field: 'values.budget' }, deal_value: { op: 'max', field: 'values.deal.value' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { group: { 'values.phase': 'build' }, metrics: { n: 1, budget: 1500, deal_value: 100 } },
      { group: { 'values.phase': 'done' }, metrics: { n: 1, budget: null, deal_value: null } },
      { group: { 'values.phase': 'plan' }, metrics: { n: 2, budget: 3000, deal_value: 90_000 } },
    ]);
    expect(res.body.totals).toEqual({ n: 4, budget: 4500, deal_value: 90_000 });
    const byDeal = await stack.api.post(`/objects/${projects}/records/aggregate`, { group_by: ['values.deal.name'], metrics: { n: { op: 'count' } } });
    expect(byDeal.body.data).toEqual([
      { group: { 'values.deal.name': 'Big' }, metrics: { n: 2 } },
      { group: { 'values.deal.name': 'Small' }, metrics: { n: 1 } },
      { group: { 'values.deal.name': null }, metrics: { n: 1 } },
    ]);
    // A built-in object's slug there names its own endpoint, as the query does.
    expect((await stack.api.post('/objects/contacts/records/aggregate', { metrics: { n: { op: 'count' } } })).status).toBe(404);
  });

  it('types the request and the answer in the SDK, metrics keyed by the request', async () => {
    const crm = createCrmClient({ baseUrl: stack.api.baseUrl, apiKey: stack.apiKey });
    const answer = await aggregate(
      crm,
      { custom: projects },
      {
        group_by: [{ field: 'values.budget', ranges: [1000, 2000] }],
        metrics: { n: { op: 'count' }, p50: { op: 'percentile', field: 'values.budget', percentile: 50 } },
        sort: [{ metric: 'n', direction: 'desc' }],
      },
    );
    const n: number | string | null = answer.totals.n;
    expect(n).toBe(4);
    // @ts-expect-error: the answer's metrics are the request's, by name
    expect(answer.totals.other).toBeUndefined();
    expect(answer.data.map((g) => [g.group['values.budget'], g.metrics.n, g.metrics.p50])).toEqual([
      [{ from: null, to: 1000 }, 1, 500],
      [{ from: 1000, to: 2000 }, 1, 1500],
      [{ from: 2000, to: null }, 1, 2500],
      [null, 1, null],
    ]);
  });

  async function mcp(key: string, name: string, args: Record<string, unknown>) {
    const res = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Api-Key': key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    return ((await res.json()) as { result: { isError?: boolean; structuredContent: any } }).result;
  }

  it('answers aggregate_records over MCP as the HTTP route answers, for a read key', async () => {
    const key = (await stack.api.post('/apikeys', { name: 'reader', scope: 'read' })).body.data.key;
    const args = { group_by: ['values.phase'], metrics: { n: { op: 'count' } }, limit: 2 };
    const viaMcp = await mcp(key, 'aggregate_records', { object: projects, ...args });
    expect(viaMcp.isError).toBeFalsy();
    const viaHttp = await stack.api.post(`/objects/${projects}/records/aggregate`, args);
    expect({ ...viaMcp.structuredContent, next_cursor: null }).toEqual({ ...viaHttp.body, next_cursor: null });
    expect(viaMcp.structuredContent.has_more).toBe(true);
    const deals = await mcp(key, 'aggregate_records', { object: 'deals', metrics: { total: { op: 'sum', field: 'value' } } });
    expect(deals.structuredContent.data).toEqual([{ group: {}, metrics: { total: 90_100 } }]);
    const wrong = await mcp(key, 'aggregate_records', { object: 'deals', metrics: { total: { op: 'sum', field: 'name' } } });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent.error.details[0].field).toBe('metrics.total.op');
  });

  it('ends a page of long group values early, with a cursor, rather than outgrow one answer', async () => {
    const contact = (await stack.api.post('/contacts', { email: `long.${tag}@example.com` })).body.data;
    for (let i = 0; i < 40; i++) {
      const body = `${String(i).padStart(2, '0')}-`.padEnd(19_000, 'x');
      expect((await stack.api.post('/activities', { type: 'note', body, contact_id: contact.id })).status).toBe(201);
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await stack.api.post('/activities/aggregate', { group_by: ['body'], metrics: { n: { op: 'count' } }, limit: 1000, cursor });
      if (res.status !== 200) throw new Error(res.text);
      expect(Buffer.byteLength(res.text)).toBeLessThan(1024 * 1024);
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((g: any) => g.group.body.slice(0, 2)));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(sizes.length).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: 40 }, (_, i) => String(i).padStart(2, '0')));
  });

  it('refuses a path into another service whose matched rows reference more related records than it may read, and answers once narrowed', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: 'Q', stages: [{ name: 'New', type: 'open' }] })).body.data;
    for (const name of ['X', 'Y', 'Z']) {
      const deal = (await stack.api.post('/deals', { name, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1 })).body.data;
      expect((await stack.api.post('/tasks', { title: `task ${name}`, deal_id: deal.id })).status).toBe(201);
    }
    const wide = await stack.api.post('/tasks/aggregate', { group_by: ['deal.name'], metrics: { n: { op: 'count' } } });
    expect(wide.status).toBe(400);
    expect(wide.body.error.details).toEqual([expect.objectContaining({ field: 'group_by.0', code: 'too_many_matches' })]);
    const narrow = await stack.api.post('/tasks/aggregate', {
      filter: { title: { $in: ['task X', 'task Z'] } },
      group_by: ['deal.name'],
      metrics: { n: { op: 'count' } },
    });
    expect(narrow.body.data).toEqual([
      { group: { 'deal.name': 'X' }, metrics: { n: 1 } },
      { group: { 'deal.name': 'Z' }, metrics: { n: 1 } },
    ]);
  });

  it('is a read: capture-only keys are refused', async () => {
    const key = (await stack.api.post('/apikeys', { name: 'capture', scope: 'capture-only' })).body.data.key;
    const res = await stack.api.post('/contacts/aggregate', { metrics: { n: { op: 'count' } } }, { key });
    expect(res.status).toBe(403);
  });
});
