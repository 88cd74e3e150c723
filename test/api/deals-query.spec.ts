import { startStack, TestStack } from '../support/stack';

/** POST /deals/query: the query language of docs/query.md over deals, their custom fields, stage and pipeline. */
describe('POST /deals/query', () => {
  let stack: TestStack;
  let sales: { id: string; stages: Array<{ id: string; type: string }> };
  const deals: Array<{ id: string; value: number; stage: string; tier: string | null }> = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['deals', 'contacts'] });
    const stages = [
      { name: 'New', type: 'open' },
      { name: 'Won', type: 'won' },
      { name: 'Lost', type: 'lost' },
    ];
    sales = (await stack.api.post('/pipelines', { name: 'Sales', stages })).body.data;
    const other = (await stack.api.post('/pipelines', { name: 'Renewals', stages })).body.data;
    expect((await stack.api.post('/objects/deals/fields', { name: 'tier', type: 'enum', enum_values: ['gold', 'silver'] })).status).toBe(201);
    for (let i = 0; i < 12; i++) {
      const pipeline = i % 4 === 3 ? other : sales;
      const stage = pipeline.stages[i % 3];
      const tier = i % 3 === 0 ? null : i % 2 ? 'gold' : 'silver';
      const res = await stack.api.post('/deals', {
        name: `Deal ${i}`,
        pipeline_id: pipeline.id,
        stage_id: stage.id,
        value: (i % 5) * 10_000,
        ...(tier ? { custom_fields: { tier } } : {}),
      });
      expect(res.status).toBe(201);
      deals.push({ id: res.body.data.id, value: (i % 5) * 10_000, stage: stage.type, tier });
    }
  });
  afterAll(() => stack?.stop());

  const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((d) => d.id);

  it('serves items exactly as GET /deals lists them', async () => {
    const listed = await stack.api.get('/deals?limit=200');
    const queried = await stack.api.post('/deals/query', { limit: 200 });
    expect(queried.status).toBe(200);
    expect(queried.body.data).toEqual(listed.body.data);
  });

  it('filters on values, custom fields, the stage and the pipeline', async () => {
    const res = await stack.api.post('/deals/query', {
      filter: { value: { $gte: 20_000 }, 'stage.type': { $ne: 'lost' }, 'pipeline.name': 'Sales', $not: { 'custom_fields.tier': 'gold' } },
      limit: 200,
    });
    expect(res.status).toBe(200);
    const inSales = new Set(deals.filter((_, i) => i % 4 !== 3).map((d) => d.id));
    const expected = deals.filter((d) => d.value >= 20_000 && d.stage !== 'lost' && inSales.has(d.id) && d.tier !== 'gold').map((d) => d.id);
    expect(ids(res).sort()).toEqual(expected.sort());
  });

  it('sorts by value, biggest first, page after page, ties by id', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await stack.api.post('/deals/query', {
        sort: [{ field: 'value', direction: 'desc' }],
        fields: ['value'],
        limit: 5,
        ...(cursor ? { cursor } : {}),
      });
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.next_cursor;
    } while (cursor);
    const expected = [...deals].sort((a, b) => b.value - a.value || (a.id < b.id ? -1 : 1)).map((d) => d.id);
    expect(seen).toEqual(expected);
  });

  it('returns the fields asked for, the stage and pipeline nested', async () => {
    const res = await stack.api.post('/deals/query', { filter: { id: deals[1].id }, fields: ['value', 'custom_fields.tier', 'stage.name', 'pipeline.name'] });
    expect(res.body.data).toEqual([{ id: deals[1].id, value: 10_000, custom_fields: { tier: 'gold' }, stage: { name: 'Won' }, pipeline: { name: 'Sales' } }]);
  });

  it('names what it cannot query', async () => {
    const res = await stack.api.post('/deals/query', { filter: { days_in_stage: { $gt: 3 }, 'stage.type': 'closed' }, sort: [{ field: 'metadata' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['filter.days_in_stage', 'filter.stage.type', 'sort.0.field']);
  });
});
