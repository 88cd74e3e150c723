import { startStack, TestStack } from '../support/stack';
import { eventually } from '../support/api-client';

/**
 * GET /events and POST /events/query with a filter (docs/events.md, Filters): the filtered log is what a
 * client computes from the unfiltered one, and a page tests a bounded number of events, so a rare filter
 * answers short pages with has_more and a cursor that moves on. API keys are the producer (the gateway's outbox).
 */
describe('Filtered event log', () => {
  const SCAN_LIMIT = 10;
  let stack: TestStack;
  let all: any[];
  beforeAll(async () => {
    stack = await startStack({ services: ['events'], env: { EVENTS_FILTER_SCAN_LIMIT: String(SCAN_LIMIT) } });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await stack.api.post('/apikeys', { name: i % 5 === 0 ? `audit ${i}` : `key ${i}`, scope: i % 3 === 0 ? 'read-write' : 'read' });
      ids.push(res.body.data.id);
      if (i % 4 === 0) await stack.api.delete(`/apikeys/${res.body.data.id}`);
    }
    all = await eventually(async () => {
      const events = await stack.api.listAll('/events');
      const keys = new Set(events.filter((e) => e.type === 'api_key.created').map((e) => e.data.key_id));
      return ids.every((id) => keys.has(id)) && events.filter((e) => e.type === 'api_key.revoked').length >= 7 ? events : undefined;
    });
  });
  afterAll(() => stack.stop());

  /** Every page of a filtered read, each checked to move the cursor on. */
  async function walk(read: (cursor?: string) => Promise<{ status: number; text: string; body: any }>): Promise<{ items: any[]; pages: number }> {
    const items: any[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await read(cursor);
      if (res.status !== 200) throw new Error(`answered ${res.status}: ${res.text}`);
      pages++;
      items.push(...res.body.data);
      expect(res.body.next_cursor).not.toBe(cursor);
      if (!res.body.has_more) return { items, pages };
      cursor = res.body.next_cursor;
    }
  }
  const byGet = (filter: object, extra = '', limit = 3) =>
    walk((cursor) =>
      stack.api.get(
        `/events?limit=${limit}&filter=${encodeURIComponent(JSON.stringify(filter))}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    );
  const byPost = (filter: object, type?: string, limit = 3) => walk((cursor) => stack.api.post('/events/query', { filter, type, limit, cursor }));

  const cases: Array<{ name: string; filter: object; expected: (e: any) => boolean; type?: string }> = [
    { name: 'a scalar in data', filter: { 'data.scope': 'read-write' }, expected: (e) => e.data.scope === 'read-write' },
    {
      name: '$or, $not and text operators',
      filter: { $or: [{ type: 'api_key.revoked' }, { $not: { 'data.name': { $starts_with: 'KEY' } } }] },
      expected: (e) =>
        e.type === 'api_key.revoked' ||
        !String(e.data.name ?? '')
          .toLowerCase()
          .startsWith('key'),
    },
    { name: 'null semantics: $ne matches the missing field', filter: { 'data.scope': { $ne: 'read' } }, expected: (e) => e.data.scope !== 'read' },
    {
      name: 'null semantics: equality to null',
      filter: { 'data.name': null, 'actor.type': 'api_key' },
      expected: (e) => e.data.name == null && e.actor?.type === 'api_key',
    },
    {
      name: '$in on the envelope with a type',
      filter: { via: { $in: ['api', 'mcp'] }, 'data.scope': { $nin: ['read-write'] } },
      expected: (e) => e.type === 'api_key.created' && ['api', 'mcp'].includes(e.via) && e.data.scope !== 'read-write',
      type: 'api_key.created',
    },
  ];

  it.each(cases)('GET and POST answer what the unfiltered log holds: $name', async ({ filter, expected, type }) => {
    const want = all.filter(expected).map((e) => e.id);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(all.length);
    const got = await byGet(filter, type ? `&type=${type}` : '');
    expect(got.items.map((e) => e.id)).toEqual(want);
    expect(got.items).toEqual(all.filter(expected));
    expect((await byPost(filter, type)).items.map((e) => e.id)).toEqual(want);
  });

  it('tests a bounded number of events per page, so a rare filter makes progress page by page', async () => {
    const last = all[all.length - 1];
    const first = await stack.api.get(`/events?limit=5&filter=${encodeURIComponent(JSON.stringify({ id: 'x' }))}`);
    expect(first.status).toBe(400);
    const rare = { 'data.key_id': last.data.key_id, type: last.type };
    const page = await stack.api.post('/events/query', { filter: rare, limit: 5 });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ data: [], has_more: true });
    const walked = await byPost(rare, undefined, 5);
    expect(walked.items.map((e) => e.id)).toEqual([last.id]);
    expect(walked.pages).toBeGreaterThanOrEqual(Math.ceil(all.length / SCAN_LIMIT));
  });

  it('answers 400 for a filter that is not JSON, names unknown paths, or nests too deep', async () => {
    const notJson = await stack.api.get('/events?filter=%7Bnope');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.details[0].field).toBe('filter');
    const unknown = await stack.api.post('/events/query', { type: 'api_key.revoked', filter: { 'data.scope': 'read', 'data.key_id': { $gt: 1 } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.map((d: { field: string }) => d.field)).toEqual(['filter.data.scope', 'filter.data.key_id.$gt']);
    let deep: object = { type: 'api_key.created' };
    for (let i = 0; i < 9; i++) deep = { $not: deep };
    const tooDeep = await stack.api.post('/events/query', { filter: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.details[0].code).toBe('too_deep');
  });
});
