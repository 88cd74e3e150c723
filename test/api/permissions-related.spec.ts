import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ text: string }> };

/**
 * Related reads follow the reader (docs/api.md, "Related reads"): a key that may read deals but not
 * contacts sees a deal's contact by id only, and cannot list it through a sub-resource, an MCP tool or a
 * custom object's reference path.
 */
describe('related reads follow the reader', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  let contact: { id: string; email: string };
  let company: { id: string };
  let deal: { id: string };
  const slug = `rel_${Date.now().toString(36)}`;
  const email = `hidden.${Date.now().toString(36)}@related.example`;

  const keyWith = async (scopes: string[]): Promise<{ api: ApiClient; key: string }> => {
    const res = await stack.api.post('/apikeys', { name: `related ${scopes.join(' ')}`, scopes });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return { api: stack.api.withKey(res.body.data.key), key: res.body.data.key };
  };
  const missing = (res: { status: number; body: any; text?: string }, permission: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect(res.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: permission }]);
  };
  const ok = (res: { status: number; text?: string }) =>
    expect({ status: res.status, text: res.status === 200 ? '' : res.text }).toEqual({ status: 200, text: '' });

  beforeAll(async () => {
    stack = await startStack();
    pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Related',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    company = (await stack.api.post('/companies', { name: 'Hidden Works', domain: `hidden-${Date.now().toString(36)}.example` })).body.data;
    contact = (await stack.api.post('/contacts', { email, first_name: 'Hedda', last_name: 'Hidden', company_id: company.id })).body.data;
    deal = (
      await stack.api.post('/deals', {
        name: 'Visible deal',
        pipeline_id: pipeline.id,
        stage_id: pipeline.stages[0].id,
        contact_id: contact.id,
        company_id: company.id,
        value: 5000,
      })
    ).body.data;
    await stack.api.post('/activities', { type: 'note', subject: 'Spoke to Hedda', contact_id: contact.id, deal_id: deal.id });
    await stack.api.post('/tasks', { title: 'Call Hedda', contact_id: contact.id, deal_id: deal.id });
    const made = await stack.api.post('/objects', {
      name: 'Referral',
      slug,
      fields: [
        { name: 'title', type: 'string' },
        { name: 'lead', type: 'reference', reference_target: 'contacts' },
        { name: 'deal', type: 'reference', reference_target: 'deals' },
      ],
    });
    if (made.status !== 201) throw new Error(`POST /objects answered ${made.status}: ${made.text}`);
    await stack.api.post(`/objects/${slug}/records`, { values: { title: 'From Hedda', lead: contact.id, deal: deal.id } });
  });
  afterAll(() => stack.stop());

  it('shows a deal to a deals:read key with its contact, company and owner by id only', async () => {
    const { api } = await keyWith(['deals:read']);
    const got = await api.get(`/deals/${deal.id}`);
    ok(got);
    expect(got.text).not.toContain(email);
    expect(got.text).not.toContain('Hedda');
    expect(got.text).not.toContain('Hidden Works');
    expect(got.body.data.contact_id).toBe(contact.id);
    expect(got.body.data.relationships.contact).toEqual({ type: 'contact', id: contact.id });
    expect(got.body.data.relationships.company).toEqual({ type: 'company', id: company.id });
    // Pipelines are not readable either: the stage and pipeline are named by id alone too.
    expect(got.body.data.relationships.stage).toEqual({ type: 'stage', id: pipeline.stages[0].id });
    expect(got.body.included).toEqual(expect.arrayContaining([{ type: 'contact', id: contact.id }]));

    // The same key with contacts:read sees the names, as every read key always did.
    const wider = await keyWith(['deals:read', 'contacts:read']);
    const named = await wider.api.get(`/deals/${deal.id}`);
    expect(named.body.data.relationships.contact).toEqual({ type: 'contact', id: contact.id, name: expect.any(String) });
    expect(named.text).toContain('Hedda');
    expect(named.body.data.relationships.company).toEqual({ type: 'company', id: company.id });
    const full = await stack.api.get(`/deals/${deal.id}`);
    expect(full.body.data.relationships.company).toEqual({ type: 'company', id: company.id, name: 'Hidden Works' });
  });

  it('refuses each sub-resource that lists another object without read on it', async () => {
    const deals = (await keyWith(['deals:read'])).api;
    missing(await deals.get(`/deals/${deal.id}/contacts`), 'contacts:read');
    missing(await deals.get(`/deals/${deal.id}/activities`), 'activities:read');
    missing(await deals.get(`/deals/${deal.id}/tasks`), 'tasks:read');
    ok(await deals.get(`/deals/${deal.id}/history`));

    const pipelines = (await keyWith(['pipelines:read'])).api;
    missing(await pipelines.get(`/pipelines/${pipeline.id}/deals`), 'deals:read');
    missing(await pipelines.get(`/pipelines/${pipeline.id}/report`), 'deals:read');
    ok(await pipelines.get(`/pipelines/${pipeline.id}`));

    const contacts = (await keyWith(['contacts:read'])).api;
    missing(await contacts.get(`/contacts/${contact.id}/deals`), 'deals:read');
    missing(await contacts.get(`/contacts/${contact.id}/activities`), 'activities:read');
    missing(await contacts.get(`/contacts/${contact.id}/tasks`), 'tasks:read');
    missing(await contacts.get(`/contacts/${contact.id}/companies`), 'companies:read');
    const companies = (await keyWith(['companies:read'])).api;
    missing(await companies.get(`/companies/${company.id}/contacts`), 'contacts:read');

    // With read on both, every one answers.
    const both = (await keyWith(['deals:read', 'contacts:read', 'pipelines:read', 'activities:read', 'tasks:read', 'companies:read'])).api;
    for (const path of [
      `/deals/${deal.id}/contacts`,
      `/deals/${deal.id}/activities`,
      `/deals/${deal.id}/tasks`,
      `/pipelines/${pipeline.id}/deals`,
      `/pipelines/${pipeline.id}/report`,
      `/contacts/${contact.id}/deals`,
      `/contacts/${contact.id}/companies`,
      `/companies/${company.id}/contacts`,
    ]) {
      ok(await both.get(path));
    }
    const listed = await both.get(`/deals/${deal.id}/contacts`);
    expect(listed.body.data.map((item: { contact_id: string }) => item.contact_id)).toEqual([contact.id]);
  });

  it('holds MCP list_associations and get_record to the same rule', async () => {
    const { key } = await keyWith(['deals:read']);
    const client = new Client({ name: 'related-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': key } } }));
    try {
      const listed = (await client.callTool({ name: 'list_associations', arguments: { object: 'deals', id: deal.id, related: 'contacts' } })) as ToolResult;
      expect(listed).toMatchObject({ isError: true, structuredContent: { error: { code: 'forbidden' } } });
      expect(listed.structuredContent.error.message).toContain('contacts:read');
      const got = (await client.callTool({ name: 'get_record', arguments: { object: 'deals', id: deal.id } })) as ToolResult;
      expect(got.isError).toBeFalsy();
      expect(JSON.stringify(got)).not.toContain(email);
      expect(JSON.stringify(got)).not.toContain('Hedda');
      expect(got.structuredContent.data.relationships.contact).toEqual({ type: 'contact', id: contact.id });
    } finally {
      await client.close();
    }
  });

  it('refuses a custom object reference path into an object the key may not read, wherever a path is accepted', async () => {
    const { api } = await keyWith([`objects.${slug}:read`]);
    ok(await api.post(`/objects/${slug}/records/query`, { fields: ['values.title', 'values.lead'] }));
    missing(await api.post(`/objects/${slug}/records/query`, { fields: ['values.lead.email'] }), 'contacts:read');
    missing(await api.post(`/objects/${slug}/records/query`, { filter: { 'values.lead.email': email } }), 'contacts:read');
    missing(await api.post(`/objects/${slug}/records/query`, { filter: { $not: { 'values.lead.first_name': 'x' } } }), 'contacts:read');
    missing(await api.post(`/objects/${slug}/records/query`, { sort: [{ field: 'values.lead.email' }] }), 'contacts:read');
    missing(await api.post(`/objects/${slug}/records/query`, { fields: ['values.deal.name'] }), 'deals:read');
    missing(await api.post(`/objects/${slug}/records/aggregate`, { group_by: ['values.lead.email'], metrics: { n: { op: 'count' } } }), 'contacts:read');
    missing(await api.post(`/objects/${slug}/records/aggregate`, { metrics: { top: { op: 'max', field: 'values.deal.value' } } }), 'deals:read');

    const wider = (await keyWith([`objects.${slug}:read`, 'contacts:read', 'deals:read'])).api;
    const read = await wider.post(`/objects/${slug}/records/query`, { fields: ['values.lead.email', 'values.deal.name'] });
    ok(read);
    expect(read.text).toContain(email);
  });
});
