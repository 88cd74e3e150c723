import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EVENT_TYPES } from '@crm/contracts';
import { ApiClient, eventually } from '../support/api-client';
import { EVENT_RESOURCES, expectedEventReads } from '../support/event-read-rules';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ text: string }> };

/** Routes that reach every object answer only what the caller may read (docs/api.md, "Permissions"). */
describe('permissions: reads across objects', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  const word = `zebu${Date.now().toString(36)}`;
  const slug = `pr_${Date.now().toString(36)}`;
  const otherSlug = `${slug}_b`;
  let contact: { id: string };
  let deal: { id: string };

  const keyWith = async (scopes: string[]): Promise<{ api: ApiClient; key: string }> => {
    const res = await stack.api.post('/apikeys', { name: `reads ${scopes.join(' ')}`.slice(0, 100), scopes });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return { api: stack.api.withKey(res.body.data.key), key: res.body.data.key };
  };
  const missing = (res: { status: number; body: any }, permission: string) => {
    expect({ status: res.status, code: res.body.error?.code, details: res.body.error?.details }).toEqual({
      status: 403,
      code: 'forbidden',
      details: [{ field: 'permission', code: 'missing_permission', message: permission }],
    });
    expect(res.body.error.message).toContain(permission);
  };
  const mcpAs = async (key: string) => {
    const client = new Client({ name: 'perm-reads', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': key } } }));
    return client;
  };
  /** Every event the deployment key sees, once the log holds an event of each of `types` for the records made here. */
  const allEvents = async () => stack.api.listAll('/events');

  beforeAll(async () => {
    // A small scan limit: a narrowed page must still make progress through a log it may read little of.
    // A gateway that waits for the services as long as a slow machine needs: the keys and webhooks below are
    // made five at a time, and a 503 for a service's slowness would fail a test of permissions.
    stack = await startStack({
      env: { EVENTS_FILTER_SCAN_LIMIT: '10', WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', RPC_TIMEOUT_MS: '60000' },
    });
    pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Reads',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    for (const s of [slug, otherSlug]) {
      const made = await stack.api.post('/objects', { name: `Thing ${s}`, slug: s, fields: [{ name: 'title', type: 'string', searchable: true }] });
      if (made.status !== 201) throw new Error(`POST /objects answered ${made.status}: ${made.text}`);
      expect((await stack.api.post(`/objects/${s}/records`, { values: { title: `${word} record` } })).status).toBe(201);
    }
    contact = (await stack.api.post('/contacts', { first_name: word, last_name: 'Person', email: `${word}@reads.example` })).body.data;
    await stack.api.post('/companies', { name: `${word} Company` });
    for (let i = 0; i < 15; i++) await stack.api.post('/contacts', { email: `filler.${i}.${word}@reads.example` });
    deal = (await stack.api.post('/deals', { name: `${word} Deal`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data;
    expect((await stack.api.post(`/deals/${deal.id}/contacts`, { contact_id: contact.id })).status).toBe(201);
    await eventually(async () => {
      const types = new Set((await allEvents()).map((e) => e.type));
      return types.has('deal.contact_added') && types.has('object_record.created') ? true : undefined;
    });
  }, 300_000);
  afterAll(() => stack?.stop());

  it('searches only the objects the key may read; naming another is 403, the duplicates need their object', async () => {
    const everything = (await stack.api.get(`/search?q=${word}&limit=50`)).body.data.map((h: { object: string }) => h.object);
    expect(new Set(everything)).toEqual(new Set(['contacts', 'companies', 'deals', slug, otherSlug]));

    const { api } = await keyWith(['contacts:read', 'deals:read', `objects.${slug}:read`]);
    const narrowed = await api.get(`/search?q=${word}&limit=50`);
    expect(narrowed.status).toBe(200);
    expect(new Set(narrowed.body.data.map((h: { object: string }) => h.object))).toEqual(new Set(['contacts', 'deals', slug]));
    expect((await api.get(`/search?q=${word}&objects=deals,contacts`)).status).toBe(200);
    missing(await api.get(`/search?q=${word}&objects=contacts,companies`), 'companies:read');
    missing(await api.get(`/search?q=${word}&objects=${otherSlug}`), `objects.${otherSlug}:read`);

    missing(await (await keyWith(['capture:write'])).api.get(`/search?q=${word}`), '*:read');
    const deals = (await keyWith(['deals:read'])).api;
    missing(await deals.get(`/contacts/${contact.id}/duplicates`), 'contacts:read');
    missing(await deals.post('/companies/duplicates', { name: word }), 'companies:read');
    expect((await api.get(`/contacts/${contact.id}/duplicates`)).status).toBe(200);
  });

  it('reads only the changes of objects the key may read, page by page, and refuses object= of another', async () => {
    const { api } = await keyWith(['deals:read', `objects.${slug}:read`]);
    const admin = await stack.api.listAll('/changes');
    const expected = admin.filter((c) => c.object === 'deals' || c.object === slug).map((c) => c.id);
    expect(expected.length).toBeGreaterThan(1);
    expect(admin.some((c) => c.object === 'contacts')).toBe(true);
    // One entry a page: every page makes progress through a log mostly of contacts.
    expect((await api.listAll('/changes', 1)).map((c) => c.id)).toEqual(expected);
    expect((await api.listAll('/changes?object=deals')).map((c) => c.id)).toEqual(admin.filter((c) => c.object === 'deals').map((c) => c.id));
    missing(await api.get('/changes?object=contacts'), 'contacts:read');
    missing(await api.get(`/changes?object=${otherSlug}`), `objects.${otherSlug}:read`);

    const customs = await keyWith(['objects:read']);
    const seen = new Set((await customs.api.listAll('/changes')).map((c) => c.object));
    expect(seen).toEqual(new Set([slug, otherSlug]));
  });

  it('reads only the events of objects the key may read, over GET, POST /events/query and with a filter', async () => {
    const log = await allEvents();
    // The documented reads, not EVENT_READS: the table the services narrow by cannot be its own oracle.
    const visible = (e: { type: string; data: { object?: string } }) =>
      expectedEventReads(e.type, e.data.object).every((r) => r === 'deals' || r === `objects.${slug}`);
    const expected = log.filter(visible).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(1);
    expect(log.some((e) => e.type === 'deal.contact_added')).toBe(true);

    const { api } = await keyWith(['events:read', 'deals:read', `objects.${slug}:read`]);
    // A page tests at most 10 events here: short pages with has_more true, and the cursor still moves on.
    const paged = await api.listAll('/events', 5);
    expect(paged.map((e) => e.id)).toEqual(expected);
    expect(paged.some((e) => e.type === 'deal.contact_added')).toBe(false);

    const queried: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 200; page++) {
      const res = await api.post('/events/query', { limit: 3, ...(cursor ? { cursor } : {}), filter: { type: 'deal.created' } });
      expect(res.status).toBe(200);
      queried.push(...res.body.data.map((e: { id: string }) => e.id));
      cursor = res.body.next_cursor;
      if (!res.body.has_more) break;
    }
    expect(queried).toEqual(log.filter((e) => e.type === 'deal.created').map((e) => e.id));

    const filtered = await api.listAll(`/events?filter=${encodeURIComponent(JSON.stringify({ type: { $in: ['deal.created', 'contact.created'] } }))}`, 2);
    expect(filtered.map((e) => e.id)).toEqual(log.filter((e) => e.type === 'deal.created').map((e) => e.id));
    expect((await api.listAll('/events?type=deal.*')).map((e) => e.id)).toEqual(log.filter((e) => visible(e) && e.type.startsWith('deal.')).map((e) => e.id));
    missing(await api.get('/events?type=contact.created'), 'contacts:read');
    missing(await api.get('/events?type=deal.created,deal.contact_added'), 'contacts:read');
    missing(await api.post('/events/query', { type: 'company.created' }), 'companies:read');
    missing(await (await keyWith(['deals:read'])).api.get('/events'), 'events:read');

    // A key that may read every object sees the whole log, as before.
    const reader = (await keyWith(['*:read'])).api;
    const whole = (await reader.listAll('/events')).map((e) => e.id);
    // Keys made meanwhile log api_key.created: the whole log is what the deployment key reads next, up to there.
    expect(whole.length).toBeGreaterThanOrEqual(log.length);
    expect((await allEvents()).map((e) => e.id).slice(0, whole.length)).toEqual(whole);
  });

  it('refuses each event type, over GET /events and a webhook, for want of exactly the reads the docs give it', async () => {
    // Most types never appear in this log: asking for each by name checks every type's reads, not only those logged.
    const wrong: unknown[] = [];
    const answer = (res: { status: number; body: any }) => (res.status === 403 ? `403 ${res.body.error?.details?.[0]?.message}` : String(res.status));
    const lackingOne = async (lacking: string) => {
      const scopes = ['events:read', 'webhooks:write', ...EVENT_RESOURCES.filter((r) => r !== lacking).map((r) => `${r}:read`)];
      const { api } = await keyWith(scopes);
      // Made by the key itself on types that need no read, so each change is judged by the new types alone.
      const hook = await api.post('/webhooks', { name: `lacks ${lacking}`, url: 'http://127.0.0.1:9/hook', event_types: ['stream.gap'] });
      expect(hook.status).toBe(201);
      expect((await api.patch(`/webhooks/${hook.body.data.id}`, { status: 'disabled' })).status).toBe(200);
      for (const type of EVENT_TYPES) {
        const expected = expectedEventReads(type).includes(lacking) ? `403 ${lacking}:read` : '200';
        const read = answer(await api.get(`/events?type=${type}&limit=1`));
        const subscribed = answer(await api.patch(`/webhooks/${hook.body.data.id}`, { event_types: [type] }));
        if (read !== expected || subscribed !== expected) wrong.push({ type, lacking, expected, read, subscribed });
      }
      expect((await stack.api.delete(`/webhooks/${hook.body.data.id}`)).status).toBe(204);
    };
    // Each key spends its own rate-limit bucket, so the keys can ask side by side.
    await Promise.all(EVENT_RESOURCES.map(lackingOne));
    expect(wrong).toEqual([]);
  }, 120_000);

  it('narrows the MCP search, list_changes and list_events the same way', async () => {
    const { key } = await keyWith(['events:read', 'deals:read']);
    const client = await mcpAs(key);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['search', 'list_changes', 'list_events']));
      const hits = (await client.callTool({ name: 'search', arguments: { q: word } })) as ToolResult;
      expect(hits.isError).toBeFalsy();
      expect(hits.structuredContent.data.map((h: { object: string }) => h.object)).toEqual(['deals']);
      const refused = (await client.callTool({ name: 'search', arguments: { q: word, objects: 'contacts' } })) as ToolResult;
      expect(refused).toMatchObject({ isError: true, structuredContent: { error: { code: 'forbidden' } } });
      expect(refused.structuredContent.error.message).toContain('contacts:read');
      const changes = (await client.callTool({ name: 'list_changes', arguments: { limit: 100 } })) as ToolResult;
      expect(changes.structuredContent.data.length).toBeGreaterThan(0);
      expect(new Set(changes.structuredContent.data.map((c: { object: string }) => c.object))).toEqual(new Set(['deals']));
      const events = (await client.callTool({ name: 'list_events', arguments: { type: 'deal.*', limit: 100 } })) as ToolResult;
      expect(events.isError).toBeFalsy();
      const types = events.structuredContent.data.map((e: { type: string }) => e.type);
      expect(types).toContain('deal.created');
      expect(types).not.toContain('deal.contact_added');
    } finally {
      await client.close();
    }
    const none = await mcpAs((await keyWith(['capture:write'])).key);
    try {
      const names = (await none.listTools()).tools.map((t) => t.name);
      for (const hidden of ['search', 'list_changes', 'list_events']) expect(names).not.toContain(hidden);
    } finally {
      await none.close();
    }
  });

  it('lets a key subscribe a webhook only to events of objects it may read', async () => {
    const url = 'http://127.0.0.1:9/hook';
    const { api } = await keyWith(['webhooks:*', 'deals:read']);
    const made = await api.post('/webhooks', { name: 'deals', url, event_types: ['deal.created', 'deal.won'] });
    expect(made.status).toBe(201);
    missing(await api.post('/webhooks', { name: 'contacts', url, event_types: ['deal.created', 'contact.created'] }), 'contacts:read');
    missing(await api.post('/webhooks', { name: 'association', url, event_types: ['deal.contact_added'] }), 'contacts:read');
    missing(await api.post('/webhooks', { name: 'everything', url }), 'contacts:read');
    missing(await api.patch(`/webhooks/${made.body.data.id}`, { event_types: ['contact.updated'] }), 'contacts:read');
    missing(await api.patch(`/webhooks/${made.body.data.id}`, { event_types: null }), 'contacts:read');
    expect((await api.patch(`/webhooks/${made.body.data.id}`, { name: 'deals only' })).status).toBe(200);

    // Changing a subscription that receives more than the key may read is refused too.
    const wide = await stack.api.post('/webhooks', { name: 'all', url });
    expect(wide.status).toBe(201);
    missing(await api.patch(`/webhooks/${wide.body.data.id}`, { name: 'renamed' }), 'contacts:read');
    missing(await (await keyWith(['webhooks:write'])).api.post('/webhooks', { name: 'x', url, event_types: ['object_record.created'] }), 'objects:read');
    expect(
      (await (await keyWith(['webhooks:write', 'objects:read'])).api.post('/webhooks', { name: 'x', url, event_types: ['object_record.created'] })).status,
    ).toBe(201);
    missing(await (await keyWith(['*:read'])).api.post('/webhooks', { name: 'x', url, event_types: ['deal.created'] }), 'webhooks:write');
  });
});
