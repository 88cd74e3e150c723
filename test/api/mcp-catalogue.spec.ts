import { startStack, TestStack } from '../support/stack';

/** Every agent loads the whole tool list before its first call: its size must not grow with the schema. */
describe('MCP tool catalogue', () => {
  let stack: TestStack;
  const alsoGrants = process.env.CRM_READ_WRITE_ALSO_GRANTS;
  beforeAll(async () => {
    // The widest key: read-write with the privacy permissions `*` does not stand for (erase_person listed too).
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:*';
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = alsoGrants;
    await stack.stop();
  });

  async function catalogue(): Promise<string> {
    const res = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Api-Key': stack.apiKey },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { tools: unknown[]; nextCursor?: string } };
    expect(result.nextCursor).toBeUndefined();
    return JSON.stringify(result.tools);
  }

  it('stays under 20,000 characters with no custom object and with thirty of several fields each', async () => {
    const bare = await catalogue();
    expect(bare).toContain('"erase_person"');
    expect(bare.length).toBeLessThan(20_000);
    for (let i = 0; i < 30; i++) {
      const created = await stack.api.post('/objects', {
        name: `Catalogue ${i}`,
        slug: `catalogue_${i}`,
        fields: [
          { name: 'title', type: 'string', required: true },
          { name: 'amount', type: 'number' },
          { name: 'done', type: 'boolean' },
          { name: 'stage', type: 'enum', enum_values: ['planned', 'running', 'finished', 'cancelled'] },
          { name: 'notes', type: 'string' },
        ],
      });
      expect(created.status).toBe(201);
    }
    const full = await catalogue();
    expect(full.length).toBeLessThan(20_000);
    expect(full).toBe(bare);
  });
});
