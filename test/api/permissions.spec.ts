import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ text: string }> };

describe('per-object permissions (scopes)', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  const slug = `perm_${Date.now().toString(36)}`;

  const keyWith = async (scopes: string[]): Promise<ApiClient> => {
    const res = await stack.api.post('/apikeys', { name: `perm ${scopes.join(' ')}`, scopes });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return stack.api.withKey(res.body.data.key);
  };
  const newDeal = async (name: string) => (await stack.api.post('/deals', { name, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data;
  const missing = (res: { status: number; body: any }, permission: string) => {
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(res.body.error.message).toContain(permission);
    expect(res.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: permission }]);
  };

  beforeAll(async () => {
    stack = await startStack();
    pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Perm',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    const made = await stack.api.post('/objects', { name: 'Perm thing', slug, fields: [{ name: 'title', type: 'string' }] });
    if (made.status !== 201) throw new Error(`POST /objects answered ${made.status}: ${made.text}`);
  });
  afterAll(() => stack.stop());

  it('takes scopes instead of scope, answers with both, and refuses both or neither', async () => {
    const created = await stack.api.post('/apikeys', { name: 'deals reader', scopes: ['deals:read', 'pipelines:*'] });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ scope: 'custom', scopes: ['deals:read', 'pipelines:*'] });
    const named = await stack.api.post('/apikeys', { name: 'named', scope: 'read' });
    expect(named.body.data).toMatchObject({ scope: 'read', scopes: ['*:read'] });
    const listed = (await stack.api.get('/apikeys?limit=100')).body.data.find((k: { id: string }) => k.id === created.body.data.id);
    expect(listed).toMatchObject({ scope: 'custom', scopes: ['deals:read', 'pipelines:*'] });

    const both = await stack.api.post('/apikeys', { name: 'both', scope: 'read', scopes: ['deals:read'] });
    expect(both.status).toBe(400);
    expect(both.body.error.details[0].field).toBe('scopes');
    const neither = await stack.api.post('/apikeys', { name: 'neither' });
    expect(neither.status).toBe(400);
    expect(neither.body.error.details[0].field).toBe('scope');
    for (const scopes of [[], ['deals'], ['planets:read'], ['deals:destroy'], 'deals:read', [7], ['objects.Bad Slug:read']]) {
      const bad = await stack.api.post('/apikeys', { name: 'bad', scopes });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_failed']);
    }
  });

  it('lets a deals-only key read deals but not contacts, naming the missing permission', async () => {
    const deal = await newDeal('Readable');
    const deals = await keyWith(['deals:read']);
    expect((await deals.get(`/deals/${deal.id}`)).status).toBe(200);
    expect((await deals.post('/deals/query', { filter: { name: 'Readable' } })).status).toBe(200);
    missing(await deals.get('/contacts'), 'contacts:read');
    missing(await deals.post('/contacts/query', {}), 'contacts:read');
    missing(await deals.patch(`/deals/${deal.id}`, { name: 'Renamed' }), 'deals:write');
    expect((await deals.get('/search?q=x')).status).toBe(200);
    missing(await deals.get('/apikeys'), 'apikeys:read');
  });

  it('splits write from delete: a deals:write key cannot delete, batch-delete or merge', async () => {
    const deal = await newDeal('Keep me');
    const writer = await keyWith(['deals:read', 'deals:write']);
    expect((await writer.patch(`/deals/${deal.id}`, { name: 'Kept' })).status).toBe(200);
    expect((await writer.post('/deals/batch', { operation: 'update', items: [{ id: deal.id, name: 'Kept again' }] })).status).toBe(200);
    missing(await writer.delete(`/deals/${deal.id}`), 'deals:delete');
    missing(await writer.post('/deals/batch', { operation: 'delete', items: [{ id: deal.id }] }), 'deals:delete');
    expect((await stack.api.get(`/deals/${deal.id}`)).status).toBe(200);

    const deleter = await keyWith(['deals:delete']);
    expect((await deleter.delete(`/deals/${deal.id}`)).status).toBe(204);
    const contacts = await keyWith(['contacts:write']);
    missing(await contacts.post('/contacts/merge', { target_id: 'cont_00000000000000000000000000', source_ids: [] }), 'contacts:delete');
  });

  it('grants *:read across resources and objects.<slug> for one custom object', async () => {
    const reader = await keyWith(['*:read']);
    expect((await reader.get('/contacts')).status).toBe(200);
    expect((await reader.get(`/objects/${slug}/records`)).status).toBe(200);
    missing(await reader.post('/contacts', { email: 'no@perm.example' }), 'contacts:write');

    const one = await keyWith([`objects.${slug}:*`]);
    const record = await one.post(`/objects/${slug}/records`, { values: { title: 'Mine' } });
    expect(record.status).toBe(201);
    expect((await one.get(`/objects/${slug}/records/${record.body.data.id}`)).status).toBe(200);
    missing(await one.post('/objects', { name: 'Nope', slug: 'nope_perm' }), 'schema:write');
    missing(await one.get('/deals'), 'deals:read');

    const all = await keyWith(['objects:read']);
    expect((await all.get(`/objects/${slug}/records`)).status).toBe(200);
    missing(await all.post(`/objects/${slug}/records`, { values: { title: 'No' } }), `objects.${slug}:write`);
  });

  it('counts reads through relations: a deals query on contact.email needs contacts:read', async () => {
    const deals = await keyWith(['deals:read']);
    expect((await deals.post('/deals/query', { filter: { 'stage.type': 'open' }, fields: ['name'] })).status).toBe(403);
    const both = await keyWith(['deals:read', 'pipelines:read', 'contacts:read']);
    expect((await both.post('/deals/query', { filter: { 'contact.email': 'a@perm.example' } })).status).toBe(200);
    const narrow = await keyWith(['deals:read', 'pipelines:read']);
    missing(await narrow.post('/deals/query', { filter: { $or: [{ name: 'x' }, { 'contact.email': 'a@perm.example' }] } }), 'contacts:read');
    missing(await narrow.post('/deals/query', { fields: ['name', 'company.name'] }), 'companies:read');
    missing(await narrow.post('/deals/query', { sort: [{ field: 'owner.name' }] }), 'users:read');
    missing(await narrow.post('/deals/aggregate', { group_by: ['contact.email'], metrics: { n: { op: 'count' } } }), 'contacts:read');
    missing(await narrow.post('/deals/aggregate', { filter: { 'company.name': 'x' }, metrics: { n: { op: 'count' } } }), 'companies:read');
    missing(await narrow.post('/deals/aggregate', { metrics: { latest: { op: 'max', field: 'contact.created_at' } } }), 'contacts:read');
    expect((await narrow.post('/deals/query', { filter: { 'stage.type': 'open' }, fields: ['name', 'pipeline.name'] })).status).toBe(200);
  });

  it('lists over MCP only the tools a narrow key may use, and checks the object at call time', async () => {
    const created = await stack.api.post('/apikeys', { name: 'mcp deals', scopes: ['deals:read', 'deals:write'] });
    const client = new Client({ name: 'perm-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': created.body.data.key } } }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['query_records', 'get_record', 'create_record', 'update_record', 'move_deal_stage']));
      for (const hidden of ['delete_record', 'merge_contacts', 'search_contacts', 'list_events', 'remove_association']) expect(names).not.toContain(hidden);

      const deals = (await client.callTool({ name: 'query_records', arguments: { object: 'deals' } })) as ToolResult;
      expect(deals.isError).toBeFalsy();
      const contacts = (await client.callTool({ name: 'query_records', arguments: { object: 'contacts' } })) as ToolResult;
      expect(contacts).toMatchObject({ isError: true, structuredContent: { error: { code: 'forbidden' } } });
      expect(contacts.structuredContent.error.message).toContain('contacts:read');
      const related = (await client.callTool({
        name: 'query_records',
        arguments: { object: 'deals', filter: { 'contact.email': 'a@perm.example' } },
      })) as ToolResult;
      expect(related.structuredContent.error.message).toContain('contacts:read');
    } finally {
      await client.close();
    }
  });
});
