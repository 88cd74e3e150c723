import { randomBytes } from 'crypto';
import { eventsBefore } from '../support/event-log';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');
/** A word of letters only, so the search's word index learns it. */
const word = () => `prod${Array.from(randomBytes(6), (b) => String.fromCharCode(97 + (b % 26))).join('')}`;

/**
 * Products (docs/products.md), kept by the deals service: every capability a record object has, from its
 * registry entry and the record engine. Each answer here comes through the gateway over HTTP.
 */
describe('Products', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  async function created(body: Record<string, unknown>) {
    const res = await stack.api.post('/products', body);
    if (res.status !== 201) throw new Error(`POST /products answered ${res.status}: ${res.text}`);
    return res.body.data;
  }

  it('creates, gets, lists, updates and deletes a product, with its events and history', async () => {
    const sku = `SKU-${tag()}`;
    const product = await created({ name: '  Widget ', sku, description: 'A widget', price: 1999, currency: 'eur', metadata: { line: 'a' } });
    expect(product).toEqual({
      id: expect.stringMatching(/^prod_[0-9a-z]{26}$/),
      name: 'Widget',
      sku,
      description: 'A widget',
      price: 1999,
      currency: 'EUR',
      active: true,
      metadata: { line: 'a' },
      custom_fields: {},
      created_at: expect.any(String),
      updated_at: product.created_at,
    });
    expect((await stack.api.get(`/products/${product.id}`)).body).toEqual({ data: product });
    expect((await stack.api.listAll('/products')).map((p) => p.id)).toContain(product.id);

    const updated = await stack.api.patch(`/products/${product.id}`, { price: 2499, active: false, description: null });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: product.id, price: 2499, active: false, description: null, sku });

    const changes = (await stack.api.get(`/products/${product.id}/changes`)).body.data;
    expect(changes.map((c: { action: string }) => c.action)).toEqual(['created', 'updated']);
    expect(changes[1]).toMatchObject({ changed: ['description', 'price', 'active'], previous: { price: 1999 }, current: { price: 2499 } });

    expect((await stack.api.delete(`/products/${product.id}`)).status).toBe(204);
    expect((await stack.api.get(`/products/${product.id}`)).status).toBe(404);
    // Every event before product.deleted, which is the marker the read waits for.
    const events = await eventsBefore(stack.api, (e) => e.type === 'product.deleted' && e.data.product_id === product.id);
    expect(events.filter((e) => e.data.product_id === product.id).map((e) => e.type)).toEqual(['product.created', 'product.updated']);
  });

  it('keeps one product per SKU whatever its case, and upserts on it', async () => {
    const sku = `Caseless-${tag()}`;
    const first = await created({ name: 'First', sku, price: 100 });
    const dup = await stack.api.post('/products', { name: 'Second', sku: sku.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'sku', code: 'duplicate' }] });
    const other = await created({ name: 'Other' });
    expect((await stack.api.patch(`/products/${other.id}`, { sku: sku.toLowerCase() })).status).toBe(409);

    const res = await stack.api.post('/products/batch', {
      operation: 'upsert',
      items: [
        { sku: sku.toLowerCase(), name: 'First renamed' },
        { sku: `new-${sku}`, name: 'Fresh', price: 5 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { status: number }) => r.status)).toEqual([200, 201]);
    // The matched product takes the SKU as the item writes it.
    expect(res.body.data[0].data).toMatchObject({ id: first.id, name: 'First renamed', price: 100, sku: sku.toLowerCase() });
    const wrongKey = await stack.api.post('/products/batch', { operation: 'upsert', key: 'name', items: [{ name: 'x' }] });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.error.details).toEqual([expect.objectContaining({ field: 'key' })]);
  });

  it('is queried, aggregated and searched like any record, and described by GET /schema', async () => {
    const name = word();
    const a = await created({ name: `${name} Alpha`, price: 1000, currency: 'USD' });
    const b = await created({ name: `${name} Beta`, price: 3000, currency: 'USD', active: false });
    const queried = await stack.api.post('/products/query', { filter: { name: { $starts_with: name } }, sort: [{ field: 'price', direction: 'asc' }] });
    expect(queried.body).toEqual(expect.objectContaining({ data: expect.any(Array) }));
    expect(queried.body.data.map((p: { id: string }) => p.id)).toEqual([a.id, b.id]);
    const sums = await stack.api.post('/products/aggregate', {
      filter: { name: { $starts_with: name } },
      group_by: ['active'],
      metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'price' } },
    });
    expect(sums.status).toBe(200);
    expect(sums.body.data).toEqual(
      expect.arrayContaining([
        { group: { active: true }, metrics: { n: 1, total: 1000 } },
        { group: { active: false }, metrics: { n: 1, total: 3000 } },
      ]),
    );
    // Prices are money in their product's currency: never added across two.
    const c = await created({ name: `${name} Gamma`, price: 500, currency: 'EUR' });
    const mixed = await stack.api.post('/products/aggregate', { filter: { name: { $starts_with: name } }, metrics: { total: { op: 'sum', field: 'price' } } });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.details).toEqual([expect.objectContaining({ field: 'metrics.total.field', code: 'mixed_currencies' })]);
    const hits = (await stack.api.get(`/search?q=${name}&objects=products`)).body.data;
    expect(hits.map((h: { id: string }) => h.id).sort()).toEqual([a.id, b.id, c.id].sort());
    expect(hits[0]).toMatchObject({ object: 'products' });
    const schema = (await stack.api.get('/schema')).body.data;
    const products = schema.objects.find((o: { slug: string }) => o.slug === 'products');
    expect(products.fields.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['name', 'sku', 'price', 'currency', 'active']));
  });

  it('takes custom fields defined on products', async () => {
    const field = `tier_${tag()}`;
    const defined = await stack.api.post('/objects/products/fields', { name: field, type: 'string' });
    expect(defined.body).toEqual(expect.objectContaining({ data: expect.anything() }));
    const product = await created({ name: 'Custom', custom_fields: { [field]: 'gold' } });
    expect(product.custom_fields).toEqual({ [field]: 'gold' });
    const res = await stack.api.post('/products', { name: 'Bad', custom_fields: { nope: 1 } });
    expect(res.status).toBe(400);
  });

  it('answers bad input with the spec error shape, naming each field', async () => {
    const res = await stack.api.post('/products', { sku: '', price: -1, currency: 'dollars', active: 'yes', colour: 'red' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['active', 'colour', 'currency', 'name', 'price', 'sku']);
    expect((await stack.api.post('/products', { name: 'x', price: 1.5 })).status).toBe(400);
    expect((await stack.api.post('/products', { name: 'x'.repeat(256) })).status).toBe(400);
    const product = await created({ name: 'Keep' });
    expect((await stack.api.patch(`/products/${product.id}`, { price: null })).status).toBe(400);
    expect((await stack.api.get('/products/prod_nope')).status).toBe(404);
  });
});
