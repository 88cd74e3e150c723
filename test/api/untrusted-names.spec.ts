import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; structuredContent?: any };

/**
 * Names a client chooses (query paths, tool arguments) are looked up in the gateway's and
 * the services' tables: one that is a property of every JavaScript object (`constructor`, `__proto__`,
 * `toString`) is an unknown name like any other, refused with 400, never a 500. And the schema tools of
 * MCP need what GET /schema needs.
 */
describe('names a client chooses, and the schema tools', () => {
  let stack: TestStack;
  const slug = `names_${Date.now().toString(36)}`;

  const keyWith = async (scopes: string[]): Promise<string> => {
    const res = await stack.api.post('/apikeys', { name: `names ${scopes.join(' ')}`, scopes });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return res.body.data.key;
  };
  const mcp = (key: string, method: string, params: Record<string, unknown> = {}) =>
    stack.api.post('/mcp', { jsonrpc: '2.0', id: 1, method, params }, { key, headers: { Accept: 'application/json, text/event-stream' } });
  const tool = async (key: string, name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const res = await mcp(key, 'tools/call', { name, arguments: args });
    expect(res.status).toBe(200);
    return res.body.result;
  };
  const invalid = (res: { status: number; body: any }, field?: string) => {
    expect([res.status, res.body.error?.code]).toEqual([400, 'validation_failed']);
    if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  };

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const made = await stack.api.post('/objects', { name: 'Names thing', slug, fields: [{ name: 'title', type: 'string' }] });
    if (made.status !== 201) throw new Error(`POST /objects answered ${made.status}: ${made.text}`);
  });
  afterAll(() => stack.stop());

  it.each(['constructor.x', '__proto__.x', 'toString.x', 'hasOwnProperty', 'constructor'])(
    "refuses the query and aggregate path '%s' with 400 for a key holding objects:read",
    async (path) => {
      const api = stack.api.withKey(await keyWith(['objects:read', 'contacts:read', 'deals:read']));
      invalid(await api.post(`/objects/${slug}/records/query`, { filter: { [path]: 'x' } }));
      invalid(await api.post(`/objects/${slug}/records/query`, { fields: [path] }));
      invalid(await api.post(`/objects/${slug}/records/query`, { sort: [{ field: path }] }));
      invalid(await api.post(`/objects/${slug}/records/aggregate`, { filter: { [path]: 'x' }, metrics: { n: { op: 'count' } } }));
      invalid(await api.post(`/objects/${slug}/records/aggregate`, { group_by: [path], metrics: { n: { op: 'count' } } }));
      invalid(await api.post('/contacts/query', { filter: { [path]: 'x' } }));
      invalid(await api.post('/deals/query', { fields: [path] }));
      invalid(await api.post('/deals/aggregate', { metrics: { n: { op: 'sum', field: path } } }));
    },
  );

  it('refuses find_duplicates, list_associations and aggregate_records on an object named like a property of every object', async () => {
    const key = stack.apiKey;
    for (const object of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const duplicates = await tool(key, 'find_duplicates', { object, data: { email: 'a@example.com' } });
      expect([object, duplicates.isError, duplicates.structuredContent.error.code]).toEqual([object, true, 'validation_failed']);
      expect(duplicates.structuredContent.error.details[0].field).toBe('object');
      const aggregate = await tool(key, 'aggregate_records', { object, metrics: { n: { op: 'count' } } });
      expect([object, aggregate.structuredContent.error.code]).toEqual([object, 'validation_failed']);
    }
    const association = await tool(key, 'list_associations', { object: '__proto__', related: 'toString', id: 'con_x' });
    expect(association.structuredContent.error.code).toBe('validation_failed');
  });

  it('lists describe_schema and describe_object only to a caller with schema:read, and refuses them to others', async () => {
    const withoutSchema = await keyWith(['contacts:read']);
    const names = (await mcp(withoutSchema, 'tools/list')).body.result.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('query_records');
    expect(names).not.toContain('describe_schema');
    expect(names).not.toContain('describe_object');
    for (const [name, args] of [
      ['describe_schema', {}],
      ['describe_object', { object: 'contacts' }],
    ] as const) {
      const refused = await tool(withoutSchema, name, args);
      expect([name, refused.isError, refused.structuredContent.error.code]).toEqual([name, true, 'forbidden']);
    }
    const schemaReader = await keyWith(['schema:read']);
    const listed = (await mcp(schemaReader, 'tools/list')).body.result.tools.map((t: { name: string }) => t.name);
    expect(listed).toEqual(expect.arrayContaining(['describe_schema', 'describe_object']));
    const schema = await tool(schemaReader, 'describe_schema', {});
    expect(schema.isError).toBeFalsy();
    expect(schema.structuredContent.data.objects.map((o: { slug: string }) => o.slug)).toContain(slug);
    expect((await tool(schemaReader, 'describe_object', { object: 'contacts' })).isError).toBeFalsy();
    // GET /schema is the HTTP twin, refused to the same key.
    expect((await new ApiClient(stack.gateway.url, withoutSchema).get('/schema')).status).toBe(403);
  });
});
