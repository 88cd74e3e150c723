import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * A filter on the event log pays for its work (docs/events.md, "What a filter costs"): its size and each
 * needle are bounded (a 400 naming the limit), and a page tests at most EVENTS_FILTER_SCAN_COST
 * conditions, so a filter with many conditions examines fewer events a page and says so with has_more and
 * a cursor. Here a page may examine 100 events and make 200 condition tests: a 20-condition filter
 * examines 10 events a page, a 1-condition one all 100.
 */
describe('what an event filter costs', () => {
  const KEYS = 30;
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['events'], env: { EVENTS_FILTER_SCAN_LIMIT: '100', EVENTS_FILTER_SCAN_COST: '200' } });
    const ids: string[] = [];
    for (let i = 0; i < KEYS; i++) ids.push((await stack.api.post('/apikeys', { name: `cost ${i}`, scope: 'read' })).body.data.id);
    await eventually(async () => {
      const keys = new Set((await stack.api.listAll('/events?type=api_key.created')).map((e) => e.data.key_id));
      return ids.every((id) => keys.has(id)) ? true : undefined;
    });
  });
  afterAll(() => stack.stop());

  /** Pages of a filtered read of the api_key.created events until has_more is false. */
  async function pages(filter: object): Promise<number> {
    let cursor: string | undefined;
    for (let n = 1; ; n++) {
      const res = await stack.api.post('/events/query', { filter, type: 'api_key.created', limit: 10, cursor });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      if (!res.body.has_more) return n;
      cursor = res.body.next_cursor;
    }
  }

  it('refuses a filter past 8 KB or a needle past 256 characters, naming the limit', async () => {
    const big = { 'data.name': { $in: Array.from({ length: 400 }, (_, i) => `a name that no key has, number ${i}`) } };
    const tooLarge = await stack.api.post('/events/query', { filter: big, type: 'api_key.created' });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error.details).toEqual([
      expect.objectContaining({ field: 'filter', code: 'too_large', message: expect.stringMatching(/8192 bytes/) }),
    ]);

    const needle = { 'data.name': { $contains: 'x'.repeat(257) } };
    const tooLong = await stack.api.get(`/events?type=api_key.created&filter=${encodeURIComponent(JSON.stringify(needle))}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details).toEqual([
      expect.objectContaining({ field: 'filter.data.name.$contains', code: 'too_long', message: expect.stringMatching(/256 characters/) }),
    ]);
    // At the limits exactly, both are read.
    expect((await stack.api.post('/events/query', { filter: { 'data.name': { $contains: 'x'.repeat(256) } }, type: 'api_key.created' })).status).toBe(200);
  });

  it('examines fewer events a page for a filter with more conditions, while GET /events keeps answering', async () => {
    // Not pre-screened ($or), never matching: every event of the window is tested.
    const light = { $or: [{ request_id: 'none' }] };
    const heavy = { $or: Array.from({ length: 20 }, (_, i) => ({ request_id: `none ${i}` })) };
    expect(await pages(light)).toBe(1);
    const [heavyPages, plain] = await Promise.all([pages(heavy), stack.api.get('/events?limit=1')]);
    expect(plain.status).toBe(200);
    // 10 events a page: three full windows, then the end of the log.
    expect(heavyPages).toBeGreaterThanOrEqual(KEYS / 10);
  });
});
