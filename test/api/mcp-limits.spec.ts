import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * What one POST /mcp may cost and run, and what a key that may write the schema can put in front of
 * every agent. Raw JSON-RPC over HTTP, as any client could send it.
 */
describe('MCP limits', () => {
  let stack: TestStack;
  // A minute's refill is one token: X-RateLimit-Remaining moves only by what requests spend.
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '400' } });
  });
  afterAll(() => stack.stop());

  async function freshKey(scope = 'read-write'): Promise<string> {
    const res = await stack.api.post('/apikeys', { name: 'mcp limits', scope });
    if (res.status !== 201) throw new Error(`could not create a key: ${res.status} ${res.text}`);
    return res.body.data.key;
  }

  let nextId = 1;
  const message = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: nextId++, method, params });
  const toolCall = (name: string, args: Record<string, unknown> = {}) => message('tools/call', { name, arguments: args });

  async function mcp(key: string, body: unknown): Promise<{ status: number; remaining: number; body: any; headers: Headers }> {
    const res = await fetch(`${stack.gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, remaining: Number(res.headers.get('x-ratelimit-remaining')), body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  const remainingOf = async (key: string) => (await mcp(key, message('tools/list'))).remaining;
  const emails = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ email: `${tag}-${i}-${Date.now()}@limits.example` }));

  it('refuses a JSON-RPC batch with a JSON-RPC error, running none of its calls', async () => {
    const key = await freshKey();
    const tag = `batch-${Date.now()}`;
    const calls = Array.from({ length: 10 }, (_, i) => toolCall('create_contact', { email: `${tag}-${i}@limits.example` }));
    const res = await mcp(key, calls);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('one JSON-RPC message per request') } });
    const created = await stack.api.post('/contacts/query', { filter: { email: { $starts_with: tag } } });
    expect(created.body.data).toEqual([]);

    // One message, one call: still answered.
    const one = await mcp(key, toolCall('query_users', { limit: 1 }));
    expect(one.status).toBe(200);
    expect(one.body.result.isError).toBeFalsy();
  });

  it('charges a batch tool one token per item, exactly as its HTTP route', async () => {
    const key = await freshKey();
    const before = await remainingOf(key);
    const viaMcp = await mcp(key, toolCall('upsert_contacts', { items: emails('mcp', 120) }));
    expect(viaMcp.status).toBe(200);
    expect(viaMcp.body.result.structuredContent.data).toHaveLength(120);
    // 120 tokens, less at most the one a minute refills.
    expect(before - viaMcp.remaining).toBeGreaterThanOrEqual(119);
    expect(before - viaMcp.remaining).toBeLessThanOrEqual(120);

    const http = await new ApiClient(stack.gateway.url, key).post('/contacts/batch', { operation: 'upsert', items: emails('http', 120) });
    expect(http.status).toBe(200);
    expect(viaMcp.remaining - Number(http.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(119);
    expect(viaMcp.remaining - Number(http.headers.get('x-ratelimit-remaining'))).toBeLessThanOrEqual(120);
  });

  it('refuses a batch tool call the bucket cannot pay for whole with 429, spending nothing and writing nothing', async () => {
    const key = await freshKey();
    await mcp(key, toolCall('upsert_contacts', { items: emails('drain', 200) }));
    await mcp(key, toolCall('upsert_contacts', { items: emails('drain', 150) }));
    const before = await remainingOf(key);
    expect(before).toBeLessThan(60);
    const tag = `refused-${Date.now()}`;
    const refused = await mcp(key, toolCall('upsert_contacts', { items: Array.from({ length: 100 }, (_, i) => ({ email: `${tag}-${i}@limits.example` })) }));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', message: expect.stringContaining('a batch of 100 items costs 100 requests') });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await remainingOf(key)).toBeGreaterThanOrEqual(before - 1);
    expect((await stack.api.post('/contacts/query', { filter: { email: { $starts_with: tag } } })).body.data).toEqual([]);
  });
  });
});
