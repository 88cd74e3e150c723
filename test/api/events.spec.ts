import { startStack, TestStack } from '../support/stack';
import { eventually } from '../support/api-client';

/** GET /events as a client sees it. API keys are the producer here: the gateway records them through its outbox. */
describe('GET /events', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // Only the log is needed: API keys, written by the gateway, are the producer.
    stack = await startStack({ services: ['events'] });
  });
  afterAll(() => stack.stop());

  async function createKeys(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await stack.api.post('/apikeys', { name: `k${i}`, scope: 'read' });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    return ids;
  }

  /** Waits until every `[type, key_id]` pair is in the log, then returns the whole api_key.* log. */
  async function waitForKeyEvents(expected: [string, string][]): Promise<any[]> {
    return eventually(async () => {
      const events = await stack.api.listAll('/events?type=api_key.*');
      const seen = new Set(events.map((e) => `${e.type} ${e.data.key_id}`));
      return expected.every(([type, id]) => seen.has(`${type} ${id}`)) ? events : undefined;
    });
  }

  const created = (ids: string[]): [string, string][] => ids.map((id) => ['api_key.created', id]);

  it('lists events in order with the spec envelope and pages through them with the cursor', async () => {
    // Twelve keys, one after another: the log must list them in exactly that order, past position 9 and 10.
    const ids = await createKeys(12);
    await stack.api.delete(`/apikeys/${ids[0]}`);
    const all = await waitForKeyEvents([...created(ids), ['api_key.revoked', ids[0]]]);
    for (const event of all) {
      expect(Object.keys(event)).toEqual(['id', 'type', 'occurred_at', 'actor', 'via', 'request_id', 'data']);
      expect(event.id).toMatch(/^evt_/);
      expect(new Date(event.occurred_at).toISOString()).toBe(event.occurred_at);
    }
    const mine = all.filter((e) => ids.includes(e.data.key_id));
    expect(mine.map((e) => [e.type, e.data.key_id])).toEqual([...ids.map((id) => ['api_key.created', id]), ['api_key.revoked', ids[0]]]);
    expect(mine[0].data).toEqual({ key_id: ids[0], name: 'k0', scope: 'read', last4: expect.stringMatching(/^[A-Za-z0-9]{4}$/) });

    const pages: any[] = [];
    let cursor = '';
    for (;;) {
      const page = await stack.api.get(`/events?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(...page.body.data);
      if (!page.body.has_more) break;
      expect(page.body.data).toHaveLength(5);
      cursor = page.body.next_cursor;
    }
    const creations = pages.filter((e) => e.type === 'api_key.created' && ids.includes(e.data.key_id));
    expect(creations.map((e) => e.data.key_id)).toEqual(ids);
    expect(new Set(pages.map((e) => e.id)).size).toBe(pages.length);
  });

  it('always returns a cursor to resume from, and a caught-up poller sees only new events', async () => {
    const caughtUp = await stack.api.get('/events?limit=200');
    let cursor = caughtUp.body.next_cursor;
    let page = caughtUp;
    while (page.body.has_more) {
      page = await stack.api.get(`/events?limit=200&cursor=${cursor}`);
      cursor = page.body.next_cursor;
    }
    expect(page.body.has_more).toBe(false);
    expect(typeof cursor).toBe('string');

    const empty = await stack.api.get(`/events?cursor=${cursor}`);
    expect(empty.body).toEqual({ data: [], has_more: false, next_cursor: cursor });

    const [id] = await createKeys(1);
    const next = await eventually(async () => {
      const res = await stack.api.get(`/events?cursor=${cursor}`);
      return res.body.data.length ? res : undefined;
    });
    expect(next.body.data.map((e: any) => e.data.key_id)).toEqual([id]);
    expect(next.body.next_cursor).not.toBe(cursor);
  });

  it('filters by one type, a list, and a resource prefix', async () => {
    const ids = await createKeys(2);
    await stack.api.delete(`/apikeys/${ids[1]}`);
    await waitForKeyEvents([...created(ids), ['api_key.revoked', ids[1]]]);
    const revoked = await stack.api.listAll('/events?type=api_key.revoked');
    expect(revoked.length).toBeGreaterThan(0);
    expect(revoked.every((e) => e.type === 'api_key.revoked')).toBe(true);
    expect(revoked.map((e) => e.data.key_id)).toContain(ids[1]);

    const both = await stack.api.listAll('/events?type=api_key.created,api_key.revoked');
    const prefixed = await stack.api.listAll('/events?type=api_key.*');
    expect(both.map((e) => e.id)).toEqual(prefixed.map((e) => e.id));
    expect(await stack.api.listAll('/events?type=deal.*')).toEqual([]);
  });

  it('moves a filtered poller past events it skipped', async () => {
    const page = await stack.api.get('/events?type=deal.won&limit=200');
    expect(page.body.data).toEqual([]);
    const everything = await stack.api.get('/events?limit=200');
    // The filtered cursor already points at the head of the log, so the next poll starts there.
    const fromFiltered = await stack.api.get(`/events?cursor=${page.body.next_cursor}`);
    expect(fromFiltered.body.data.length).toBeLessThanOrEqual(everything.body.data.length);
    expect(fromFiltered.body.data.map((e: any) => e.id)).not.toContain(everything.body.data[0].id);
  });

  it('rejects unknown types, bad cursors and bad limits with 400', async () => {
    const unknown = await stack.api.get('/events?type=contact.created,contact.exploded');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'type', code: 'invalid_value' }] });
    expect(unknown.body.error.message).toContain('contact.exploded');
    expect((await stack.api.get('/events?type=nothing.*')).status).toBe(400);

    const cursor = await stack.api.get('/events?cursor=not-a-cursor');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe('invalid_request');
    const foreign = Buffer.from(JSON.stringify({ l: 'apikeys', k: 'key_x' })).toString('base64url');
    expect((await stack.api.get(`/events?cursor=${foreign}`)).status).toBe(400);

    for (const limit of ['0', '201', 'ten', '1.5', '1e2', '']) {
      const res = await stack.api.get(`/events?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('limit');
    }
    expect((await stack.api.get('/events?color=red')).body.error.details[0]).toMatchObject({ field: 'color', code: 'unknown_field' });
  });
});
