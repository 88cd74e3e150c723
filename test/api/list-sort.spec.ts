import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

/**
 * `sort=-value,created_at` on the GET lists: any column of the items, `-` for descending, ties by id,
 * nulls last ascending and first descending, keyset cursors bound to their order; the default order of
 * every list stays as it was.
 */
describe('Sorting GET lists (sort=-value,created_at)', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  const tag = randomBytes(3).toString('hex');
  const deals: Array<{ id: string; value: number; created_at: string }> = [];
  const VALUES = [300, 100, 300, 200, 100, 300, 0];

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
    pipeline = (await stack.api.post('/pipelines', { name: `Sorted ${tag}`, stages: [{ name: 'New', type: 'open' }] })).body.data;
    for (const [i, value] of VALUES.entries()) {
      const res = await stack.api.post('/deals', { name: `D${i}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value });
      expect(res.status).toBe(201);
      deals.push(res.body.data);
    }
  });
  afterAll(() => stack?.stop());

  /** Every item of a list, following next_cursor, `limit` at a time. */
  async function walk(path: string, limit = 2, between?: () => Promise<void>): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | undefined;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const res = await stack.api.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text}`);
      items.push(...res.body.data);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
      if (cursor && between) await between();
    } while (cursor);
    return items;
  }
  const byIdAsc = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

  it('orders a list by several keys, descending where asked, ties by id, page after page', async () => {
    const got = await walk(`/pipelines/${pipeline.id}/deals?sort=-value,created_at`);
    const expected = [...deals].sort((a, b) => b.value - a.value || Date.parse(a.created_at) - Date.parse(b.created_at) || byIdAsc(a, b));
    expect(got.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    // The same list without sort keeps its order: oldest first.
    expect((await walk(`/pipelines/${pipeline.id}/deals`)).map((d) => d.id)).toEqual([...deals].sort(byIdAsc).map((d) => d.id));
  });

  it('combines with the list’s filters, and never skips or repeats a record while others are written', async () => {
    let extra = 0;
    const got = await walk(`/deals?pipeline_id=${pipeline.id}&sort=value`, 2, async () => {
      // Written between pages, at both ends of the order.
      for (const value of [0, 1_000_000]) {
        const res = await stack.api.post('/deals', { name: `Late ${++extra}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value });
        expect(res.status).toBe(201);
      }
    });
    const ids = got.map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const d of deals) expect(ids.filter((id) => id === d.id)).toHaveLength(1);
    const values = got.map((d) => d.value);
    expect(values).toEqual([...values].sort((a, b) => a - b));
  });

  it('puts nulls last ascending and first descending, across page boundaries', async () => {
    const scores = [40, null, 10, null, 40];
    const made: Array<{ id: string; icp_score: number | null }> = [];
    for (const score of scores) {
      const res = await stack.api.post('/contacts', {
        email: `n${made.length}.${tag}@example.com`,
        stage: 'prospect',
        ...(score === null ? {} : { icp_score: score }),
      });
      made.push({ id: res.body.data.id, icp_score: score });
    }
    const mine = (items: any[]) => items.filter((c) => made.some((m) => m.id === c.id)).map((c) => c.id);
    const asc = [...made].sort((a, b) => (a.icp_score ?? Infinity) - (b.icp_score ?? Infinity) || byIdAsc(a, b));
    const desc = [...made].sort((a, b) => (b.icp_score ?? Infinity) - (a.icp_score ?? Infinity) || byIdAsc(a, b));
    expect(mine(await walk('/contacts?stage=prospect&sort=icp_score', 1))).toEqual(asc.map((c) => c.id));
    expect(mine(await walk('/contacts?stage=prospect&sort=-icp_score', 1))).toEqual(desc.map((c) => c.id));
  });

  it('sorts the nested lists and custom object records too', async () => {
    const contact = (await stack.api.post('/contacts', { email: `owner.${tag}@example.com` })).body.data;
    const mine: Array<{ id: string; value: number }> = [];
    for (const value of [5, 50, 20]) {
      const res = await stack.api.post('/deals', {
        name: `C${value}`,
        pipeline_id: pipeline.id,
        stage_id: pipeline.stages[0].id,
        value,
        contact_id: contact.id,
      });
      mine.push(res.body.data);
    }
    expect((await walk(`/contacts/${contact.id}/deals?sort=-value`, 1)).map((d) => d.value)).toEqual([50, 20, 5]);
    const slug = `sorted_${tag}`;
    expect((await stack.api.post('/objects', { name: 'Sorted', slug, fields: [{ name: 'title', type: 'string' }] })).status).toBe(201);
    const records: string[] = [];
    for (const title of ['a', 'b', 'c']) records.push((await stack.api.post(`/objects/${slug}/records`, { values: { title } })).body.data.id);
    expect((await walk(`/objects/${slug}/records?sort=-created_at`, 2)).map((r) => r.id)).toEqual([...records].reverse());
  });

  it('refuses what it cannot sort on, a malformed sort, and a cursor from another order', async () => {
    const unknown = await stack.api.get('/deals?sort=-nope');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'sort' })]);
    expect(unknown.body.error.details[0].message).toContain('value');
    for (const bad of ['value;drop', '--value', 'value,', 'a,b,c,d,e,f']) {
      const res = await stack.api.get(`/deals?sort=${encodeURIComponent(bad)}`);
      expect({ bad, status: res.status, field: res.body.error?.details?.[0]?.field }).toEqual({ bad, status: 400, field: 'sort' });
    }
    expect((await stack.api.get('/deals?sort=metadata')).status).toBe(400);
    const sorted = await stack.api.get(`/pipelines/${pipeline.id}/deals?sort=-value&limit=1`);
    const other = await stack.api.get(`/pipelines/${pipeline.id}/deals?sort=value&limit=1&cursor=${sorted.body.next_cursor}`);
    expect(other.status).toBe(400);
    expect(other.body.error.details[0].field).toBe('cursor');
    const plain = await stack.api.get(`/pipelines/${pipeline.id}/deals?limit=1`);
    expect((await stack.api.get(`/pipelines/${pipeline.id}/deals?sort=value&limit=1&cursor=${plain.body.next_cursor}`)).status).toBe(400);
    // The event log has one order, its own.
    expect((await stack.api.get('/events?sort=type')).status).toBe(400);
  });
});
