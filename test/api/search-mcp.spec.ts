import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

// Letters only, so a token is one word to the search and matches nothing another test created.
const token = () =>
  `q${randomBytes(5)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;

/** The MCP tools `search` and `find_duplicates` answer exactly what their HTTP routes answer (docs/search.md). */
describe('MCP search and find_duplicates', () => {
  let stack: TestStack;
  let client: Client;

  beforeAll(async () => {
    stack = await startStack();
    client = new Client({ name: 'crm-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': stack.apiKey } } }));
  });
  afterAll(async () => {
    await client?.close();
    await stack?.stop();
  });

  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<ToolResult>;
  async function ok(name: string, args: Record<string, unknown>) {
    const result = await call(name, args);
    if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`);
    return result.structuredContent;
  }
  async function http(method: 'GET' | 'POST', path: string, body?: unknown) {
    const res = await stack.api.request(method, path, body);
    expect(res.status).toBe(200);
    return res.body;
  }
  const create = async (path: string, body: unknown) => {
    const res = await stack.api.post(path, body);
    expect(res.status).toBe(201);
    return res.body.data;
  };

  it('search answers what GET /search answers, for exact, prefix and typo words, objects and pages', async () => {
    const word = token();
    const domain = `${token()}.com`;
    const company = await create('/companies', { name: `${word} Industries`, domain });
    const pipeline = (await stack.api.post('/pipelines', { name: `Search ${word}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const deal = await create('/deals', { name: `${word} renewal`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id });
    const contacts = [];
    for (const first of ['Ada', 'Grace', 'Alan']) {
      contacts.push(await create('/contacts', { first_name: first, last_name: word, email: `${first.toLowerCase()}@${domain}`, company_id: company.id }));
    }

    const typo = `${word.slice(0, 3)}${word[4]}${word[3]}${word.slice(5)}`;
    const cases: Array<Record<string, string | number>> = [
      { q: word },
      { q: word.slice(0, 6) },
      { q: typo },
      { q: domain },
      { q: `ada ${word}`, objects: 'contacts' },
      { q: word, objects: 'companies,deals' },
      { q: word, limit: 2 },
    ];
    for (const args of cases) {
      const expected = await http('GET', `/search?${new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)]))}`);
      expect(expected.data.length).toBeGreaterThan(0);
      expect(await ok('search', args)).toEqual(expected);
    }
    const everything = await http('GET', `/search?q=${word}&limit=100`);
    expect(everything.data.map((hit: { id: string }) => hit.id).sort()).toEqual([company.id, deal.id, ...contacts.map((c) => c.id)].sort());

    const first = await ok('search', { q: word, limit: 2 });
    expect(first.has_more).toBe(true);
    const second = await ok('search', { q: word, limit: 2, cursor: first.next_cursor });
    expect(second).toEqual(await http('GET', `/search?q=${word}&limit=2&cursor=${encodeURIComponent(first.next_cursor)}`));

    const bad = await call('search', { q: '' });
    expect(bad).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation_failed' } } });
  });

  it('find_duplicates answers what the duplicates routes answer, by id and by draft', async () => {
    const local = token();
    const domain = `${token()}.com`;
    const last = token();
    const original = await create('/contacts', { email: `${local}@${domain}`, first_name: 'Ada', last_name: last });
    await create('/contacts', { email: `${local.toUpperCase()}+news@${domain}` });
    await create('/contacts', { email: `other.${token()}@${domain}`, first_name: 'Ada', last_name: last });

    const stored = await http('GET', `/contacts/${original.id}/duplicates`);
    expect(stored.data.length).toBe(2);
    expect(await ok('find_duplicates', { object: 'contacts', id: original.id })).toEqual(stored);
    const strict = await http('GET', `/contacts/${original.id}/duplicates?min_score=0.95`);
    expect(strict.data.length).toBe(1);
    expect(await ok('find_duplicates', { object: 'contacts', id: original.id, min_score: 0.95 })).toEqual(strict);

    const draft = { email: `${local}+draft@${domain}`, first_name: 'Ada', last_name: last };
    const drafted = await http('POST', '/contacts/duplicates', draft);
    expect(drafted.data.length).toBe(3);
    expect(await ok('find_duplicates', { object: 'contacts', data: draft })).toEqual(drafted);

    const company = await create('/companies', { name: `${last} Holdings`, domain });
    await create('/companies', { name: `${last} Holdings`, domain: `www.${domain}` });
    const companies = await http('GET', `/companies/${company.id}/duplicates`);
    expect(companies.data.length).toBe(1);
    expect(await ok('find_duplicates', { object: 'companies', id: company.id })).toEqual(companies);
  });

  it('find_duplicates with both or neither of id and data is a validation_failed tool error', async () => {
    const contact = await create('/contacts', { email: `${token()}@example.com` });
    for (const args of [
      { object: 'contacts' },
      { object: 'contacts', id: contact.id, data: { email: contact.email } },
      { object: 'companies', id: null, data: null },
    ]) {
      const result = await call('find_duplicates', args);
      expect(result).toMatchObject({ isError: true, structuredContent: { error: { code: 'validation_failed', details: [{ field: 'id' }] } } });
    }
    const missing = await call('find_duplicates', { object: 'contacts', id: 'cont_missing' });
    expect(missing).toMatchObject({ isError: true, structuredContent: { error: { code: 'not_found' } } });
  });
});
