import { randomBytes } from 'crypto';
import { eventsBefore } from '../support/event-log';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

interface Line {
  id: string;
  amount: number;
}

/**
 * A deal's line items (docs/products.md): the amount arithmetic in cents, rounded half up; the deal's
 * currency; the deal's value following its lines under concurrent writes; lines outliving their product;
 * a deal's lines written in batches; every deal's lines queried and aggregated (revenue by product).
 */
describe('Line items', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
    pipeline = (await stack.api.post('/pipelines', { name: `Lines ${tag()}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
  });
  afterAll(() => stack.stop());

  async function ok(method: 'post' | 'patch', path: string, body: Record<string, unknown>) {
    const res = await stack.api[method](path, body);
    if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
    return res.body.data;
  }
  const deal = (extra: Record<string, unknown> = {}) =>
    ok('post', '/deals', { name: `Deal ${tag()}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, ...extra });
  const add = (dealId: string, body: Record<string, unknown>) => ok('post', `/deals/${dealId}/line_items`, body);

  it('computes each amount in cents, rounding half a cent up, and defaults a line to its product at the time', async () => {
    const d = await deal();
    // 0.5 × 5 = 2.5 cents: half up gives 3 (half even would give 2).
    expect((await add(d.id, { name: 'Half', quantity: 0.5, unit_price: 5 })).amount).toBe(3);
    // 1 × 1 × 50% = 0.5 cent -> 1.
    expect((await add(d.id, { name: 'Half off', quantity: 1, unit_price: 1, discount_percent: 50 })).amount).toBe(1);
    // 3 × 333 × 87.5% = 874.125 -> 874.
    expect((await add(d.id, { name: 'Down', quantity: 3, unit_price: 333, discount_percent: 12.5 })).amount).toBe(874);
    // 2.3333 × 1999 × 66.67% = 3109.7659... -> 3110, computed exactly (no binary fractions).
    expect((await add(d.id, { name: 'Exact', quantity: 2.3333, unit_price: 1999, discount_percent: 33.33 })).amount).toBe(3110);
    // 100% off is free.
    expect((await add(d.id, { name: 'Free', quantity: 7, unit_price: 999, discount_percent: 100 })).amount).toBe(0);

    const product = await ok('post', '/products', { name: `Seat ${tag()}`, price: 1250, currency: 'USD' });
    const line = await add(d.id, { product_id: product.id, quantity: 4 });
    expect(line).toEqual({
      id: expect.stringMatching(/^li_[0-9a-z]{26}$/),
      deal_id: d.id,
      product_id: product.id,
      name: product.name,
      quantity: 4,
      unit_price: 1250,
      discount_percent: 0,
      currency: 'USD',
      amount: 5000,
      created_at: expect.any(String),
      updated_at: line.created_at,
    });
    // A later price is the product's, not the line's.
    await ok('patch', `/products/${product.id}`, { price: 9999 });
    const changed = await ok('patch', `/deals/${d.id}/line_items/${line.id}`, { quantity: 2.5, discount_percent: 10 });
    expect(changed).toMatchObject({ unit_price: 1250, quantity: 2.5, discount_percent: 10, amount: 2813 });

    const listed = (await stack.api.get(`/deals/${d.id}/line_items`)).body.data;
    expect(listed.map((l: Line) => l.amount)).toEqual([3, 1, 874, 3110, 0, 2813]);
  });

  it("refuses a line in another currency than the deal's", async () => {
    const d = await deal({ currency: 'USD' });
    const res = await stack.api.post(`/deals/${d.id}/line_items`, { name: 'Euro', quantity: 1, unit_price: 100, currency: 'EUR' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'currency', code: 'currency_mismatch' }] });
    const euro = await ok('post', '/products', { name: `Euro ${tag()}`, price: 100, currency: 'EUR' });
    const byProduct = await stack.api.post(`/deals/${d.id}/line_items`, { product_id: euro.id, quantity: 1 });
    expect(byProduct.status).toBe(400);
    expect(byProduct.body.error.details).toEqual([expect.objectContaining({ field: 'currency', code: 'currency_mismatch' })]);
    // The deal's own price for the product is in the deal's currency.
    expect((await add(d.id, { product_id: euro.id, quantity: 1, unit_price: 110 })).currency).toBe('USD');
    const line = await add(d.id, { name: 'Dollar', quantity: 1, unit_price: 100 });
    expect((await stack.api.patch(`/deals/${d.id}/line_items/${line.id}`, { currency: 'GBP' })).status).toBe(400);
  });

  it("keeps a following deal's value equal to its lines' sum under concurrent writes, one deal.updated and history entry each", async () => {
    const d = await deal({ value_from_line_items: true });
    expect(d).toMatchObject({ value: 0, value_from_line_items: true });
    const prices = Array.from({ length: 16 }, (_, i) => 100 * (i + 1));
    const lines: Line[] = await Promise.all(prices.map((p, i) => add(d.id, { name: `L${i}`, quantity: 1, unit_price: p })));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(sum(prices));

    // Concurrent updates and removals, each changing the sum.
    const removed = lines.slice(0, 5);
    const doubled = lines.slice(5, 11);
    await Promise.all([
      ...removed.map(async (l) => expect((await stack.api.delete(`/deals/${d.id}/line_items/${l.id}`)).status).toBe(204)),
      ...doubled.map((l) => ok('patch', `/deals/${d.id}/line_items/${l.id}`, { quantity: 2 })),
    ]);
    const remaining = (await stack.api.get(`/deals/${d.id}/line_items?limit=100`)).body.data as Line[];
    expect(remaining).toHaveLength(11);
    const value = (await stack.api.get(`/deals/${d.id}`)).body.data.value;
    expect(value).toBe(sum(remaining.map((l) => l.amount)));
    expect(value).toBe(sum(prices.slice(5)) + sum(prices.slice(5, 11)));

    // Every line write changed the sum: one history entry each, chained without a gap.
    const history = (await stack.api.get(`/deals/${d.id}/changes?limit=100`)).body.data.filter((c: { action: string }) => c.action === 'updated');
    expect(history).toHaveLength(16 + 11);
    let last = 0;
    for (const entry of history) {
      expect(entry).toMatchObject({ changed: ['value'], previous: { value: last } });
      last = entry.current.value;
    }
    expect(last).toBe(value);

    const marker = `Marker ${tag()}`;
    await ok('patch', `/deals/${d.id}`, { name: marker });
    const events = (await eventsBefore(stack.api, (e) => e.type === 'deal.updated' && e.data.deal_id === d.id && e.data.current?.name === marker)).filter(
      (e) => e.data.deal_id === d.id,
    );
    expect(events.filter((e) => e.type === 'deal.updated')).toHaveLength(27);
    expect(
      events
        .filter((e) => e.type.startsWith('line_item.'))
        .map((e) => e.type)
        .sort(),
    ).toEqual([...Array(16).fill('line_item.created'), ...Array(5).fill('line_item.deleted'), ...Array(6).fill('line_item.updated')].sort());
  });

  it('turns value_from_line_items on and off: on sets the sum, a value sent while on is refused', async () => {
    const d = await deal({ value: 5000 });
    await add(d.id, { name: 'A', quantity: 2, unit_price: 150 });
    expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(5000);
    const on = await ok('patch', `/deals/${d.id}`, { value_from_line_items: true });
    expect(on).toMatchObject({ value: 300, value_from_line_items: true });
    const refused = await stack.api.patch(`/deals/${d.id}`, { value: 1 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'value', code: 'computed' })]);
    expect(
      (await stack.api.post('/deals', { name: 'x', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1, value_from_line_items: true })).status,
    ).toBe(400);
    const off = await ok('patch', `/deals/${d.id}`, { value_from_line_items: false, value: 7 });
    expect(off).toMatchObject({ value: 7, value_from_line_items: false });
  });

  it("deleting a product keeps its lines' name, prices and amount", async () => {
    const d = await deal({ value_from_line_items: true });
    const product = await ok('post', '/products', { name: `Gone ${tag()}`, price: 4200 });
    const line = await add(d.id, { product_id: product.id, quantity: 3, discount_percent: 5 });
    expect((await stack.api.delete(`/products/${product.id}`)).status).toBe(204);
    const [kept] = (await stack.api.get(`/deals/${d.id}/line_items`)).body.data;
    expect(kept).toEqual(line);
    expect(kept).toMatchObject({ name: product.name, unit_price: 4200, amount: 11970, product_id: product.id });
    expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(11970);
  });

  it('answers bad input in the spec error shape, and unknown deals and lines with 404', async () => {
    const d = await deal();
    const bad = async (body: Record<string, unknown>, fields: string[]) => {
      const res = await stack.api.post(`/deals/${d.id}/line_items`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((x: { field: string }) => x.field).sort()).toEqual(fields);
    };
    await bad({ name: 'x', quantity: 0, unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', quantity: -1, unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', quantity: 0.00001, unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', quantity: '2', unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', quantity: 2_000_000_000, unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', unit_price: 1 }, ['quantity']);
    await bad({ name: 'x', quantity: 1, unit_price: 1.5, discount_percent: 101 }, ['discount_percent', 'unit_price']);
    await bad({ name: 'x', quantity: 1, unit_price: 1, discount_percent: 12.345 }, ['discount_percent']);
    await bad({ name: 'x', quantity: 1, unit_price: 1, product_id: 'nope', colour: 'red' }, ['colour', 'product_id']);
    await bad({ quantity: 1, unit_price: 1 }, ['name']);
    await bad({ name: 'x', quantity: 1 }, ['unit_price']);
    await bad({ quantity: 1, product_id: 'prod_01hzzzzzzzzzzzzzzzzzzzzzzz' }, ['product_id']);
    await bad({ name: 'x', quantity: 1_000_000_000, unit_price: 9_007_199_254_740_991 }, ['quantity']);
    expect((await stack.api.post('/deals/deal_01hzzzzzzzzzzzzzzzzzzzzzzz/line_items', { name: 'x', quantity: 1, unit_price: 1 })).status).toBe(404);
    expect((await stack.api.get('/deals/deal_01hzzzzzzzzzzzzzzzzzzzzzzz/line_items')).status).toBe(404);
    expect((await stack.api.patch(`/deals/${d.id}/line_items/li_01hzzzzzzzzzzzzzzzzzzzzzzz`, { quantity: 1 })).status).toBe(404);
    expect((await stack.api.delete(`/deals/${d.id}/line_items/li_01hzzzzzzzzzzzzzzzzzzzzzzz`)).status).toBe(404);
    const line = await add(d.id, { name: 'x', quantity: 1, unit_price: 1 });
    expect((await stack.api.patch(`/deals/${d.id}/line_items/${line.id}`, { quantity: null })).status).toBe(400);
    const other = await deal();
    expect((await stack.api.patch(`/deals/${other.id}/line_items/${line.id}`, { quantity: 2 })).status).toBe(404);
  });
  describe('in batches', () => {
    const batch = (dealId: string, body: Record<string, unknown>) => stack.api.post(`/deals/${dealId}/line_items/batch`, body);

    it("writes a deal's lines together: one deal.updated after them, the value their sum", async () => {
      const d = await deal({ value_from_line_items: true });
      const created = await batch(d.id, {
        operation: 'create',
        items: [
          { name: 'A', quantity: 2, unit_price: 150 },
          { name: 'B', quantity: 1, unit_price: 999, discount_percent: 10 },
          { name: 'C', quantity: 3, unit_price: 100 },
        ],
      });
      expect(created.status).toBe(200);
      expect(created.body.data.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([
        [0, 201],
        [1, 201],
        [2, 201],
      ]);
      const lines = created.body.data.map((r: { data: Line }) => r.data);
      // 999 × 90% = 899.1 -> 899.
      expect(lines.map((l: Line) => l.amount)).toEqual([300, 899, 300]);
      expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(1499);

      const changed = await batch(d.id, {
        operation: 'update',
        items: [
          { id: lines[0].id, quantity: 4 },
          { id: lines[1].id, name: 'B' },
        ],
      });
      expect(changed.body.data.map((r: { status: number; data: Line }) => [r.status, r.data.amount])).toEqual([
        [200, 600],
        [200, 899],
      ]);
      const removed = await batch(d.id, { operation: 'delete', items: [{ id: lines[2].id }] });
      expect(removed.body.data).toEqual([{ index: 0, status: 204 }]);
      expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(1499);

      const marker = `Marker ${tag()}`;
      await ok('patch', `/deals/${d.id}`, { name: marker });
      const events = (await eventsBefore(stack.api, (e) => e.type === 'deal.updated' && e.data.deal_id === d.id && e.data.current?.name === marker)).filter(
        (e) => e.data.deal_id === d.id && (e.type.startsWith('line_item.') || (e.type === 'deal.updated' && e.data.changed.includes('value'))),
      );
      // Per batch: its lines' events in item order, then the deal's one change of value; the unchanged item emits nothing.
      expect(
        events.map((e) => (e.type === 'deal.updated' ? `deal.updated ${e.data.current.value}` : `${e.type} ${e.data.name ?? e.data.current?.name ?? ''}`)),
      ).toEqual([
        'line_item.created A',
        'line_item.created B',
        'line_item.created C',
        'deal.updated 1499',
        'line_item.updated ',
        'deal.updated 1799',
        'line_item.deleted C',
        'deal.updated 1499',
      ]);
      const history = (await stack.api.get(`/deals/${d.id}/changes?limit=100`)).body.data.filter((c: { action: string }) => c.action === 'updated');
      expect(history.map((c: { current: { value?: number; name?: string } }) => c.current.value ?? c.current.name)).toEqual([1499, 1799, 1499, marker]);
    });

    it('fails only the bad items, or with all_or_none every item, naming each', async () => {
      const d = await deal({ value_from_line_items: true, currency: 'USD' });
      const partial = await batch(d.id, {
        operation: 'create',
        items: [
          { name: 'Good', quantity: 1, unit_price: 100 },
          { name: 'Euro', quantity: 1, unit_price: 100, currency: 'EUR' },
          { product_id: 'prod_01hzzzzzzzzzzzzzzzzzzzzzzz', quantity: 1 },
          { name: 'Bad', quantity: 0, unit_price: 1 },
        ],
      });
      expect(partial.status).toBe(200);
      expect(
        partial.body.data.map((r: { status: number; error?: { details: Array<{ field: string; code: string }> } }) => [r.status, r.error?.details[0]]),
      ).toEqual([
        [201, undefined],
        [400, expect.objectContaining({ field: 'currency', code: 'currency_mismatch' })],
        [400, expect.objectContaining({ field: 'product_id', code: 'not_found' })],
        [400, expect.objectContaining({ field: 'quantity' })],
      ]);
      expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(100);

      const whole = await batch(d.id, {
        operation: 'create',
        all_or_none: true,
        items: [
          { name: 'Fine', quantity: 1, unit_price: 5 },
          { name: 'Euro', quantity: 1, unit_price: 100, currency: 'EUR' },
        ],
      });
      expect(whole.status).toBe(400);
      expect(whole.body.error.details.map((x: { field: string; code: string }) => [x.field, x.code])).toEqual([['items.1.currency', 'currency_mismatch']]);
      expect((await stack.api.get(`/deals/${d.id}/line_items`)).body.data.map((l: { name: string }) => l.name)).toEqual(['Good']);
      expect((await stack.api.get(`/deals/${d.id}`)).body.data.value).toBe(100);

      const other = await deal();
      const [good] = (await stack.api.get(`/deals/${d.id}/line_items`)).body.data;
      const foreign = await batch(other.id, { operation: 'update', items: [{ id: good.id, quantity: 2 }] });
      expect(foreign.body.data).toEqual([expect.objectContaining({ index: 0, status: 404 })]);
      expect((await batch(d.id, { operation: 'upsert', items: [{ name: 'x', quantity: 1, unit_price: 1 }] })).body.error.details).toEqual([
        expect.objectContaining({ field: 'operation', code: 'upsert_unsupported' }),
      ]);
      expect((await batch(d.id, { operation: 'delete', items: [{ id: good.id }, { id: good.id }] })).body.error.details).toEqual([
        expect.objectContaining({ field: 'items.1', code: 'duplicate' }),
      ]);
      expect((await batch('deal_01hzzzzzzzzzzzzzzzzzzzzzzz', { operation: 'create', items: [{ name: 'x', quantity: 1, unit_price: 1 }] })).status).toBe(404);
      expect((await batch(d.id, { operation: 'create', items: [] })).status).toBe(400);
    });

    it('holds a deal to 500 lines across batches, refusing each line past it', async () => {
      const d = await deal();
      const items = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ name: `L${from + i}`, quantity: 1, unit_price: 1 }));
      for (const [n, from] of [
        [200, 0],
        [200, 200],
        [99, 400],
      ]) {
        const res = await batch(d.id, { operation: 'create', items: items(n, from) });
        expect(res.body.data.every((r: { status: number }) => r.status === 201)).toBe(true);
      }
      const last = await batch(d.id, { operation: 'create', items: items(3, 499) });
      expect(last.body.data.map((r: { status: number; error?: { details: Array<{ code: string }> } }) => [r.status, r.error?.details[0].code])).toEqual([
        [201, undefined],
        [400, 'limit_exceeded'],
        [400, 'limit_exceeded'],
      ]);
    });
  });

  describe('across deals', () => {
    it('aggregates revenue by product over won deals, never adding currencies', async () => {
      const seat = await ok('post', '/products', { name: `Seat ${tag()}`, price: 1000 });
      const support = await ok('post', '/products', { name: `Support ${tag()}`, price: 250 });
      const wonStage = (
        await stack.api.post('/pipelines', {
          name: `Won ${tag()}`,
          stages: [
            { name: 'Open', type: 'open' },
            { name: 'Won', type: 'won' },
          ],
        })
      ).body.data;
      const run = tag();
      // Each deal's lines: [product, quantity]; the expected revenue is computed here from them.
      const plans: Array<{ won: boolean; lines: Array<[{ id: string; price: number }, number]> }> = [
        {
          won: true,
          lines: [
            [seat, 3],
            [support, 2],
          ],
        },
        { won: true, lines: [[seat, 5]] },
        {
          won: false,
          lines: [
            [seat, 100],
            [support, 100],
          ],
        },
        { won: true, lines: [[support, 7]] },
      ];
      const expected = new Map<string, number>();
      for (const plan of plans) {
        const d = await ok('post', '/deals', {
          name: `Rev ${run}`,
          pipeline_id: wonStage.id,
          stage_id: wonStage.stages[plan.won ? 1 : 0].id,
        });
        const res = await stack.api.post(`/deals/${d.id}/line_items/batch`, {
          operation: 'create',
          items: plan.lines.map(([product, quantity]) => ({ product_id: product.id, quantity })),
        });
        expect(res.status).toBe(200);
        if (plan.won) for (const [product, quantity] of plan.lines) expected.set(product.id, (expected.get(product.id) ?? 0) + product.price * quantity);
      }
      const filter = { 'deal.status': 'won', 'deal.name': `Rev ${run}` };
      const byProduct = await stack.api.post('/deals/line_items/aggregate', {
        filter,
        group_by: ['product_id', 'product.name'],
        metrics: { revenue: { op: 'sum', field: 'amount' }, lines: { op: 'count' } },
        sort: [{ metric: 'revenue', direction: 'desc' }],
      });
      expect(byProduct.status).toBe(200);
      const answered = byProduct.body.data.map((g: { group: Record<string, string>; metrics: { revenue: number } }) => [g.group.product_id, g.metrics.revenue]);
      expect(answered).toEqual([...expected].sort((a, b) => b[1] - a[1]));
      expect(byProduct.body.data[0].group['product.name']).toBe(answered[0][0] === seat.id ? seat.name : support.name);
      expect(byProduct.body.totals.revenue).toBe([...expected.values()].reduce((a, b) => a + b, 0));

      // The lines themselves, through the query.
      const queried = await stack.api.post('/deals/line_items/query', { filter: { ...filter, product_id: support.id }, fields: ['quantity', 'deal.name'] });
      expect(queried.status).toBe(200);
      expect(queried.body.data.map((l: { quantity: number }) => l.quantity).sort()).toEqual([2, 7]);

      // A sum over lines of two currencies is refused; grouped by currency it is answered.
      const euros = await ok('post', '/deals', { name: `Rev ${run}`, pipeline_id: wonStage.id, stage_id: wonStage.stages[1].id, currency: 'EUR' });
      await add(euros.id, { name: 'Euro line', quantity: 1, unit_price: 500 });
      const mixed = await stack.api.post('/deals/line_items/aggregate', { filter, metrics: { revenue: { op: 'sum', field: 'amount' } } });
      expect(mixed.status).toBe(400);
      expect(mixed.body.error.details).toEqual([expect.objectContaining({ field: 'metrics.revenue.field', code: 'mixed_currencies' })]);
      const perCurrency = await stack.api.post('/deals/line_items/aggregate', {
        filter,
        group_by: ['currency'],
        metrics: { revenue: { op: 'sum', field: 'amount' } },
      });
      expect(perCurrency.body.data.map((g: { group: { currency: string }; metrics: { revenue: number } }) => [g.group.currency, g.metrics.revenue])).toEqual([
        ['EUR', 500],
        ['USD', [...expected.values()].reduce((a, b) => a + b, 0)],
      ]);
    });

    it("needs deals:read, and products:read for a product's own fields", async () => {
      const key = await stack.api.post('/apikeys', { name: `lines ${tag()}`, scopes: ['deals:read'] });
      expect(key.status).toBe(201);
      const reader = stack.api.withKey(key.body.data.key);
      const byId = await reader.post('/deals/line_items/aggregate', { group_by: ['product_id'], metrics: { n: { op: 'count' } } });
      expect(byId.status).toBe(200);
      const byName = await reader.post('/deals/line_items/aggregate', { group_by: ['product.name'], metrics: { n: { op: 'count' } } });
      expect(byName.status).toBe(403);
      expect(byName.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: 'products:read' }]);
      const d = await deal();
      const write = await reader.post(`/deals/${d.id}/line_items/batch`, { operation: 'create', items: [{ name: 'x', quantity: 1, unit_price: 1 }] });
      expect(write.status).toBe(403);
    });
  });
});
