import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { existsSync } from 'fs';
import { join } from 'path';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

const READ_TOOLS = [
  'aggregate_records',
  'describe_object',
  'describe_schema',
  'find_duplicates',
  'get_deal_history',
  'get_record',
  'list_associations',
  'list_changes',
  'list_events',
  'list_pipelines',
  'pipeline_report',
  'query_records',
  'search',
  'search_contacts',
  // docs/exports.md: starting an export is a read (exports:read and read on each object it copies).
  'start_export',
];
const WRITE_TOOLS = [
  'create_record',
  'delete_record',
  'merge_contacts',
  'move_deal_stage',
  'remove_association',
  'set_association',
  'set_association_labels',
  'update_record',
  'upsert_records',
  'write_line_items',
];

async function connect(stack: TestStack, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'crm-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers } }));
  return client;
}

describe('MCP server at POST /mcp', () => {
  let stack: TestStack;
  const keys: Record<string, string> = {};
  const clients: Record<string, Client> = {};

  beforeAll(async () => {
    stack = await startStack();
    for (const scope of ['read', 'capture-only']) keys[scope] = (await stack.api.post('/apikeys', { name: `mcp ${scope}`, scope })).body.data.key;
    keys['read-write'] = stack.apiKey;
    clients['read-write'] = await connect(stack, { 'X-Api-Key': keys['read-write'] });
    clients.read = await connect(stack, { Authorization: `Bearer ${keys.read}` });
    clients['capture-only'] = await connect(stack, { 'X-Api-Key': keys['capture-only'] });
  });
  afterAll(async () => {
    for (const client of Object.values(clients)) await client.close();
    await stack.stop();
  });

  const call = (scope: string, name: string, args: Record<string, unknown> = {}) => clients[scope].callTool({ name, arguments: args }) as Promise<ToolResult>;
  async function ok(name: string, args: Record<string, unknown> = {}) {
    const result = await call('read-write', name, args);
    if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
    return result;
  }

  it('lists tools by the key scope, with annotations and input schemas from the API contracts', async () => {
    const all = (await clients['read-write'].listTools()).tools;
    expect(all.map((t) => t.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
    expect((await clients.read.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    expect((await clients['capture-only'].listTools()).tools).toEqual([]);

    const byName = Object.fromEntries(all.map((t) => [t.name, t]));
    expect(byName.get_record.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.merge_contacts.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.create_record.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    const create = (await ok('describe_object', { object: 'contacts' })).structuredContent.data.create;
    expect(create.properties.email).toMatchObject({ type: 'string', format: 'email' });
    expect(create.properties.stage.enum).toEqual(['lead', 'prospect', 'customer', 'churned']);
    expect(create.additionalProperties).toBe(false);
    expect((byName.update_record.inputSchema as any).required).toContain('id');
    expect((byName.search_contacts.inputSchema as any).properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
  });

  it('upserts a list of contacts or companies in one call, answered item by item', async () => {
    const t = Date.now();
    const existing = (await stack.api.post('/contacts', { email: `list-${t}@example.com`, first_name: 'Ada' })).body.data;
    const { tools } = await clients['read-write'].listTools();
    const schema = tools.find((tool) => tool.name === 'upsert_records')!.inputSchema as any;
    expect(schema.required).toEqual(['object', 'items']);
    expect(schema.properties.operation).toBeUndefined();
    const result = await ok('upsert_records', {
      object: 'contacts',
      items: [{ email: `LIST-${t}@example.com`, title: 'CTO' }, { email: `list2-${t}@example.com` }, { email: 'bad' }],
    });
    expect(result.structuredContent.data.map((r: { status: number }) => r.status)).toEqual([200, 201, 400]);
    expect(result.structuredContent.data[0].data).toMatchObject({ id: existing.id, first_name: 'Ada', title: 'CTO' });
    const companies = await ok('upsert_records', { object: 'companies', items: [{ name: 'Acme', domain: `acme-${t}.example.com` }], all_or_none: true });
    expect(companies.structuredContent.data[0]).toMatchObject({ status: 201, data: { name: 'Acme' } });
  });

  it('runs contact tools through the same rules and events as the HTTP API', async () => {
    const email = `mcp-${Date.now()}@example.com`;
    const created = await ok('create_record', { object: 'contacts', data: { email, first_name: 'Ada' } });
    const contact = created.structuredContent.data;
    expect(created.content[0].text).toContain(contact.id);
    expect((await stack.api.get(`/contacts/${contact.id}`)).body.data).toMatchObject({ email, first_name: 'Ada' });

    const updated = await ok('update_record', { object: 'contacts', id: contact.id, data: { first_name: 'Grace', icp_score: 80 } });
    expect(updated.structuredContent.data).toMatchObject({ first_name: 'Grace', icp_score: 80 });
    expect((await ok('get_record', { object: 'contacts', id: contact.id })).structuredContent).toEqual((await stack.api.get(`/contacts/${contact.id}`)).body);

    const found = await ok('search_contacts', { search: 'Grace', limit: 5 });
    expect(found.structuredContent.data.map((c: { id: string }) => c.id)).toContain(contact.id);

    const other = (await ok('create_record', { object: 'contacts', data: { email: `loser-${email}` } })).structuredContent.data;
    const merged = await ok('merge_contacts', { winner_id: contact.id, loser_id: other.id });
    expect(merged.structuredContent.data.id).toBe(contact.id);
    expect((await stack.api.get(`/contacts/${other.id}`)).status).toBe(404);

    // Events reach the log asynchronously; wait until this test's last one (the loser's deletion) is there.
    const log = await eventually(async () => {
      const page = await ok('list_events', { type: 'contact.*', limit: 200 });
      return page.structuredContent.data.some((e: any) => e.type === 'contact.deleted' && e.data.contact_id === other.id) ? page : undefined;
    });
    const types = log.structuredContent.data.filter((e: any) => e.data.contact_id === contact.id).map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['contact.created', 'contact.updated']));
    const http = await stack.api.get('/events?type=contact.*&limit=200');
    expect(log.structuredContent.data).toEqual(http.body.data);
  });

  it('runs pipeline and deal tools', async () => {
    const pipeline = (
      await stack.api.post('/pipelines', {
        name: 'MCP',
        stages: [
          { name: 'New', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    expect((await ok('list_pipelines')).structuredContent.data.map((p: { id: string }) => p.id)).toContain(pipeline.id);
    const [open, won] = pipeline.stages;
    const deal = (await ok('create_record', { object: 'deals', data: { name: 'Agent deal', pipeline_id: pipeline.id, stage_id: open.id, value: 500 } }))
      .structuredContent.data;
    expect((await ok('update_record', { object: 'deals', id: deal.id, data: { value: 750 } })).structuredContent.data.value).toBe(750);
    expect((await ok('move_deal_stage', { id: deal.id, stage_id: won.id })).structuredContent.data).toMatchObject({ stage_id: won.id, status: 'won' });
    expect((await ok('get_record', { object: 'deals', id: deal.id })).structuredContent).toEqual((await stack.api.get(`/deals/${deal.id}`)).body);
    expect(
      (await ok('query_records', { object: 'deals', filter: { pipeline_id: pipeline.id } })).structuredContent.data.map((d: { id: string }) => d.id),
    ).toEqual([deal.id]);
    const history = await ok('get_deal_history', { id: deal.id });
    expect(history.structuredContent).toEqual((await stack.api.get(`/deals/${deal.id}/history`)).body);

    // A deal's line items: written in one call, listed as the deal's, aggregated across deals.
    const product = (await stack.api.post('/products', { name: `Agent seat ${Date.now()}`, price: 400 })).body.data;
    const written = await ok('write_line_items', {
      id: deal.id,
      operation: 'create',
      items: [
        { product_id: product.id, quantity: 3 },
        { name: 'Setup', quantity: 1, unit_price: 99 },
        { name: 'Bad', quantity: 0, unit_price: 1 },
      ],
    });
    expect(written.structuredContent.data.map((r: { status: number }) => r.status)).toEqual([201, 201, 400]);
    const listed = await ok('list_associations', { object: 'deals', id: deal.id, related: 'line_items' });
    expect(listed.structuredContent).toEqual((await stack.api.get(`/deals/${deal.id}/line_items`)).body);
    expect(listed.structuredContent.data.map((l: { amount: number }) => l.amount)).toEqual([1200, 99]);
    const revenue = await ok('aggregate_records', {
      object: 'line_items',
      filter: { deal_id: deal.id },
      group_by: ['product.name'],
      metrics: { revenue: { op: 'sum', field: 'amount' } },
    });
    expect(
      revenue.structuredContent.data.map((g: { group: Record<string, unknown>; metrics: { revenue: number } }) => [g.group['product.name'], g.metrics.revenue]),
    ).toEqual([
      [product.name, 1200],
      [null, 99],
    ]);
  });

  it('describes the live schema and works on custom object records', async () => {
    const object = await stack.api.post('/objects', {
      name: 'Project',
      slug: 'projects',
      enforcement_level: 'hard',
      fields: [{ name: 'title', type: 'string', required: true }],
    });
    expect(object.status).toBe(201);
    const schema = (await ok('describe_schema')).structuredContent.data;
    const bySlug = Object.fromEntries(schema.objects.map((o: { slug: string }) => [o.slug, o]));
    expect(bySlug.projects).toEqual({
      slug: 'projects',
      kind: 'custom',
      one: 'project',
      many: 'projects',
      capabilities: expect.arrayContaining(['query', 'upsert']),
    });
    expect(bySlug.companies).toMatchObject({ kind: 'built_in', one: 'company', many: 'companies' });
    expect(bySlug.companies.capabilities).toEqual(expect.arrayContaining(['custom_fields', 'importable', 'query', 'upsert', 'history']));
    expect(bySlug.users.capabilities).not.toContain('upsert');
    // Brief: no field definitions, which describe_object gives per object.
    expect(JSON.stringify(schema)).not.toContain('"fields"');
    expect((await ok('describe_object', { object: 'projects' })).structuredContent.data.object).toBe('projects');

    const record = (await ok('create_record', { object: 'projects', data: { values: { title: 'Launch' } } })).structuredContent.data;
    expect(
      (await ok('update_record', { object: 'projects', id: record.id, data: { values: { title: 'Relaunch' } } })).structuredContent.data.values.title,
    ).toBe('Relaunch');
    expect((await ok('get_record', { object: 'projects', id: record.id })).structuredContent).toEqual(
      (await stack.api.get(`/objects/projects/records/${record.id}`)).body,
    );
    expect((await ok('query_records', { object: 'projects' })).structuredContent.data.map((r: { id: string }) => r.id)).toEqual([record.id]);
    const missing = await call('read-write', 'create_record', { object: 'projects', data: { values: {} } });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent.error.code).toBe('validation_failed');
  });

  it("describes each object's live paths and their operators on demand, and queries any object", async () => {
    expect((await stack.api.post('/objects/deals/fields', { name: 'tier', type: 'enum', enum_values: ['gold', 'silver'] })).status).toBe(201);
    const tools = Object.fromEntries((await clients.read.listTools()).tools.map((t) => [t.name, t]));
    const described = async (object: string): Promise<Record<string, any>> =>
      Object.fromEntries((await call('read', 'describe_object', { object })).structuredContent.data.paths.map((p: { path: string }) => [p.path, p]));
    const paths = await described('deals');
    expect(paths.value.description).toBe('number; operators: $eq $ne $gt $gte $lt $lte $in $nin $exists');
    expect(paths['custom_fields.tier'].enum).toEqual(['gold', 'silver']);
    // A path the contacts service answers for, listed by asking it.
    expect(paths['contact.email'].operators).toContain('$contains');
    expect(paths.value.operators).not.toContain('$contains');
    expect(paths.value.sortable).toBe(true);
    expect(paths['contact.email'].sortable).toBe(false);
    expect(await described('projects')).toHaveProperty(['values.title']);
    // Products, kept by the deals service, described and written through the same generic tools.
    const products = await described('products');
    expect(products.price.description).toBe('number; operators: $eq $ne $gt $gte $lt $lte $in $nin $exists');
    expect(products.sku.operators).toContain('$starts_with');
    expect(products).not.toHaveProperty(['stage.name']);
    const product = (await call('read-write', 'create_record', { object: 'products', data: { name: 'Seat', sku: `MCP-${Date.now()}`, price: 900 } }))
      .structuredContent.data;
    expect(product).toMatchObject({ id: expect.stringMatching(/^prod_/), price: 900, active: true });
    expect(tools.query_records.annotations).toMatchObject({ readOnlyHint: true });

    const contact = (await stack.api.post('/contacts', { email: `mcp-query-${Date.now()}@example.com`, icp_score: 91 })).body.data;
    const body = { filter: { icp_score: { $gte: 90 }, email: contact.email }, fields: ['email', 'icp_score'] };
    const answer = await call('read', 'query_records', { object: 'contacts', ...body });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toEqual((await stack.api.post('/contacts/query', body)).body);
    expect(answer.structuredContent.data).toEqual([{ id: contact.id, email: contact.email, icp_score: 91 }]);
    expect((await call('read', 'query_records', { object: 'projects', filter: { 'values.title': 'Relaunch' } })).structuredContent.data).toHaveLength(1);

    const wrong = await call('read', 'query_records', { object: 'contacts', filter: { emial: 'x' } });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent.error.details[0]).toMatchObject({ field: 'filter.emial', code: 'unknown_field' });
    expect(wrong.content[0].text).toContain('email');
    const refused = await call('capture-only', 'query_records', { object: 'contacts' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error.code).toBe('forbidden');
  });

  it('pages list_associations with limit and cursor, as the HTTP list does', async () => {
    const t = Date.now();
    const company = (await ok('create_record', { object: 'companies', data: { name: 'Paged', domain: `paged-${t}.example.com` } })).structuredContent.data;
    const contacts: string[] = [];
    for (let i = 0; i < 5; i++) {
      const contact = (await ok('create_record', { object: 'contacts', data: { email: `paged-${t}-${i}@example.com` } })).structuredContent.data;
      await ok('set_association', { object: 'contacts', id: contact.id, related: 'companies', related_id: company.id });
      contacts.push(contact.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = (await ok('list_associations', { object: 'companies', id: company.id, related: 'contacts', limit: 2, ...(cursor ? { cursor } : {}) }))
        .structuredContent;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((c: { contact_id: string }) => c.contact_id));
      cursor = page.has_more ? page.next_cursor : undefined;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...contacts].sort());
    const wrong = await call('read', 'list_associations', { object: 'companies', id: company.id, related: 'contacts', limit: 0 });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent.error.code).toBe('validation_failed');
  });

  it('associates, lists, changes and removes related records, and deletes records, through the object-taking tools', async () => {
    const t = Date.now();
    const contact = (await ok('create_record', { object: 'contacts', data: { email: `assoc-${t}@example.com` } })).structuredContent.data;
    const company = (await ok('create_record', { object: 'companies', data: { name: 'Assoc', domain: `assoc-${t}.example.com` } })).structuredContent.data;
    const pair = { object: 'contacts', id: contact.id, related: 'companies', related_id: company.id };
    expect((await ok('set_association', { ...pair, is_primary: true })).structuredContent.data).toMatchObject({ company_id: company.id, is_primary: true });
    // Setting it again changes the existing association.
    expect((await ok('set_association', { ...pair, role: 'advisor' })).structuredContent.data).toMatchObject({ company_id: company.id, role: 'advisor' });
    const listed = await ok('list_associations', { object: 'contacts', id: contact.id, related: 'companies' });
    expect(listed.structuredContent).toEqual((await stack.api.get(`/contacts/${contact.id}/companies`)).body);
    const back = await ok('list_associations', { object: 'companies', id: company.id, related: 'contacts' });
    expect(back.structuredContent.data.map((c: { contact_id: string }) => c.contact_id)).toContain(contact.id);
    await ok('remove_association', pair);
    expect((await stack.api.get(`/contacts/${contact.id}/companies`)).body.data).toEqual([]);

    const wrongPair = await call('read-write', 'set_association', { ...pair, related: 'tasks' });
    expect(wrongPair.structuredContent.error.code).toBe('validation_failed');
    expect(wrongPair.content[0].text).toContain('contacts → companies');

    const tools = Object.fromEntries((await clients['read-write'].listTools()).tools.map((tool) => [tool.name, tool]));
    expect(tools.delete_record.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    await ok('delete_record', { object: 'companies', id: company.id });
    expect((await stack.api.get(`/companies/${company.id}`)).status).toBe(404);
  });

  it('answers a wrong object or argument with a tool error that says what is valid', async () => {
    const wrongObject = await call('read', 'query_records', { object: 'companie' });
    expect(wrongObject).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation_failed', details: [{ field: 'object' }] } } });
    expect(wrongObject.content[0].text).toMatch(/contacts, companies, users, activities, tasks, deals.*projects/);
    const wrongArgument = await call('read', 'get_record', { object: 'contacts', idd: 'x' });
    expect(wrongArgument.structuredContent.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['id', 'idd']);
    expect(wrongArgument.content[0].text).toContain('get_record takes object, id');
    expect((await call('read-write', 'upsert_records', { object: 'users', items: [{ email: 'u@example.com' }] })).content[0].text).toContain(
      'users has no batch writes',
    );
  });

  it('answers bad arguments, unknown tools and out-of-scope calls with tool errors carrying our codes', async () => {
    const bad = await call('read-write', 'create_record', { object: 'contacts', data: { email: 'not-an-email', colour: 'red' } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent.error.code).toBe('validation_failed');
    expect(bad.structuredContent.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['colour', 'email']);
    expect(bad.content[0].text).toMatch(/^validation_failed: /);

    const unknown = await call('read-write', 'get_record', { object: 'contacts', id: 'cont_00000000000000000000000000' });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: { code: 'not_found' } } });

    expect(await call('read-write', 'drop_tables')).toMatchObject({ isError: true, structuredContent: { error: { code: 'not_found' } } });

    const readOnly = await call('read', 'create_record', { object: 'contacts', data: { email: `read-${Date.now()}@example.com` } });
    expect(readOnly).toMatchObject({ isError: true, structuredContent: { error: { code: 'forbidden' } } });
    expect((await call('capture-only', 'search_contacts')).structuredContent.error.code).toBe('forbidden');
    expect((await call('read', 'search_contacts', { limit: 1 })).isError).toBeFalsy();
  });

  it('refuses a request without a valid key, in the API error shape', async () => {
    const res = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: 'Bearer crm_live_wrong' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('serves desktop clients over stdio through the same endpoint (npm run mcp)', async () => {
    const main = join(__dirname, '..', '..', 'dist', 'scripts', 'mcp-stdio.js');
    expect(existsSync(main)).toBe(true);
    const client = new Client({ name: 'crm-desktop', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [main, '--key', keys.read, '--url', stack.gateway.url], stderr: 'pipe' }));
    try {
      // The custom object an earlier test made adds no tool: the record tools take it as their object.
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
      const denied = (await client.callTool({ name: 'create_record', arguments: { object: 'contacts', data: { email: 'x@example.com' } } })) as ToolResult;
      expect(denied.structuredContent.error.code).toBe('forbidden');
    } finally {
      await client.close();
    }
  });
});

describe('MCP and the rate limit', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '4' } });
  });
  afterAll(() => stack.stop());

  it('spends from the key bucket the HTTP API uses', async () => {
    const client = await connect(stack, { 'X-Api-Key': stack.apiKey });
    try {
      let limited: unknown;
      for (let i = 0; i < 10 && !limited; i++) {
        await client.callTool({ name: 'search_contacts', arguments: { limit: 1 } }).catch((err: unknown) => (limited = err));
      }
      expect(String((limited as Error | undefined)?.message)).toMatch(/429|rate_limit_exceeded/);
      const http = await stack.api.get('/contacts?limit=1');
      expect(http.status).toBe(429);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
