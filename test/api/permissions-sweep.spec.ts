import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AnyOperation, Ops, PERMISSION_ACTIONS, PERMISSION_RESOURCES } from '@crm/contracts';
import { ApiClient } from '../support/api-client';
import { ExpectedPermission, expectedPermission } from '../support/permission-rules';
import { startStack, TestStack } from '../support/stack';

/** Every keyed route of the operation table, with the permission docs/api.md gives it (not the table's own). */
const ROUTES = Object.values(Ops)
  .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
  .filter((op) => op.http && op.http.access !== 'public' && op.http.access !== 'any-key')
  .map((op) => ({ op, http: op.http!, expected: expectedPermission(op.http!.method, op.http!.path) }));

const FAKE_ID = 'zzzz_00000000000000000000000000';

/**
 * Keys for one route: `allows` holds exactly what the docs say it needs (its permission and read on what it
 * shows); `refuses` holds the resource's other actions and the action on another resource, so neither half
 * of the permission alone lets it through; `withoutReads` holds the permission but one object it shows.
 */
function keysFor(p: ExpectedPermission, slug: string) {
  if (p.narrowed) return { allows: ['deals:read'], refuses: ['events:read', 'contacts:write', 'capture:write'], names: '*:read', withoutReads: [] };
  const needs = p.needs.replace(':slug', slug);
  const [resource, action] = needs.split(':');
  const other = resource.startsWith('objects.') ? `objects.${slug}_other` : PERMISSION_RESOURCES.find((r) => r !== resource && r !== 'objects')!;
  const others = PERMISSION_ACTIONS.filter((a) => a !== action).map((a) => `${resource}:${a}`);
  const reads = p.reads.map((r) => `${r}:read`);
  const withoutReads = reads.map((lacking) => ({ scopes: [needs, ...reads.filter((r) => r !== lacking)], names: lacking }));
  return { allows: [needs, ...reads], refuses: [...others, `${other}:${action}`, ...reads], names: needs, withoutReads };
}

/**
 * The whole operation table under permissions: each route answers a key holding exactly its permission
 * with anything but 403 (a made-up id or an empty body may be 400 or 404), and a key without it with 403
 * naming it; each MCP tool of an operation is offered, and callable, only to a key its route lets in.
 */
describe('permissions: every route and tool of the operation table', () => {
  let stack: TestStack;
  const slug = `sweep_${Date.now().toString(36)}`;
  const clients = new Map<string, { api: ApiClient; key: string }>();

  const keyWith = async (scopes: string[]) => {
    const id = scopes.join(' ');
    if (!clients.has(id)) {
      const res = await stack.api.post('/apikeys', { name: `sweep ${id}`.slice(0, 100), scopes });
      if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
      clients.set(id, { api: stack.api.withKey(res.body.data.key), key: res.body.data.key });
    }
    return clients.get(id)!;
  };
  const pathOf = (template: string) =>
    template.replace(/:([a-z_]+)/g, (_, name: string) => (name === 'slug' ? slug : name === 'name' ? 'title' : name === 'type' ? 'contact.created' : FAKE_ID));

  const alsoGrants = process.env.CRM_READ_WRITE_ALSO_GRANTS;
  beforeAll(async () => {
    // The stack's read-write key hands on privacy:* (docs/privacy.md, "Who may erase"), which `*` does not stand for.
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:*';
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
    const made = await stack.api.post('/objects', { name: 'Sweep', slug, fields: [{ name: 'title', type: 'string' }] });
    if (made.status !== 201) throw new Error(`POST /objects answered ${made.status}: ${made.text}`);
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = alsoGrants;
    await stack?.stop();
  });

  it('covers the table', () => {
    expect(ROUTES.length).toBeGreaterThan(100);
  });

  it('lets each route in with its permission and refuses it without, naming it', async () => {
    const wrong: unknown[] = [];
    for (const { http, expected } of ROUTES) {
      if (http.path === '/mcp') continue;
      const { allows, refuses, names, withoutReads } = keysFor(expected, slug);
      const path = pathOf(http.path);
      const body = http.method === 'GET' || http.method === 'DELETE' ? undefined : {};
      const allowed = await (await keyWith(allows)).api.request(http.method, path, body);
      const refused = await (await keyWith(refuses)).api.request(http.method, path, body);
      const route = `${http.method} ${http.path}`;
      if (allowed.status === 403 || allowed.status === 401 || allowed.status >= 500) wrong.push({ route, allows, status: allowed.status, body: allowed.body });
      const named = refused.body?.error?.details?.[0]?.message;
      if (refused.status !== 403 || named !== names) wrong.push({ route, refuses, status: refused.status, named, expected: names });
      for (const partial of withoutReads) {
        const shown = await (await keyWith(partial.scopes)).api.request(http.method, path, body);
        const lacking = shown.body?.error?.details?.[0]?.message;
        if (shown.status !== 403 || lacking !== partial.names)
          wrong.push({ route, scopes: partial.scopes, status: shown.status, named: lacking, expected: partial.names });
      }
    }
    expect(wrong).toEqual([]);
  }, 600_000);

  it("offers each operation's MCP tool only to a key its route lets in", async () => {
    const wrong: unknown[] = [];
    for (const { op, expected } of ROUTES.filter((r) => r.op.mcp)) {
      const tool = op.mcp!.tool;
      const { allows, refuses } = keysFor(expected, slug);
      for (const [scopes, offered] of [
        [allows, true],
        [refuses, false],
      ] as const) {
        const client = new Client({ name: 'sweep', version: '1.0.0' });
        const { key } = await keyWith([...scopes]);
        await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': key } } }));
        try {
          const listed = (await client.listTools()).tools.some((t) => t.name === tool);
          const called = (await client.callTool({ name: tool, arguments: {} })) as { structuredContent?: { error?: { code?: string } } };
          const forbidden = called.structuredContent?.error?.code === 'forbidden';
          if (listed !== offered || forbidden === offered) wrong.push({ tool, scopes, listed, forbidden });
        } finally {
          await client.close();
        }
      }
    }
    expect(wrong).toEqual([]);
  }, 600_000);
});
