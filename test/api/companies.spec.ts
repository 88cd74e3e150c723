import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

describe('Companies', () => {
  let stack: TestStack;
  const domain = () => `co-${randomBytes(5).toString('hex')}.example.com`;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  it('creates, gets, updates and deletes a company', async () => {
    const d = domain();
    const created = await stack.api.post('/companies', { name: '  Initech ', domain: d.toUpperCase(), industry: 'Software', metadata: { size: 'smb' } });
    expect(created.status).toBe(201);
    const company = created.body.data;
    expect(company).toEqual({
      id: expect.stringMatching(/^comp_[0-9a-z]{26}$/),
      name: 'Initech',
      domain: d,
      industry: 'Software',
      metadata: { size: 'smb' },
      custom_fields: {},
      created_at: expect.any(String),
      updated_at: company.created_at,
    });
    expect((await stack.api.get(`/companies/${company.id}`)).body).toEqual({ data: company });

    const updated = await stack.api.patch(`/companies/${company.id}`, { industry: null, name: 'Initech Inc' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: company.id, name: 'Initech Inc', domain: d, industry: null, metadata: { size: 'smb' } });

    expect((await stack.api.delete(`/companies/${company.id}`)).status).toBe(204);
    expect((await stack.api.get(`/companies/${company.id}`)).status).toBe(404);
    expect((await stack.api.delete(`/companies/${company.id}`)).status).toBe(404);
  });

  it('validates names, domains and unknown fields', async () => {
    const res = await stack.api.post('/companies', { domain: 'https://example.com/about', size: 3 });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['domain', 'name', 'size']);
    expect((await stack.api.post('/companies', { name: '' })).status).toBe(400);
    expect((await stack.api.post('/companies', { name: 'x'.repeat(256) })).status).toBe(400);
    const created = (await stack.api.post('/companies', { name: 'Keep' })).body.data;
    expect((await stack.api.patch(`/companies/${created.id}`, { name: null })).status).toBe(400);
  });

  it('keeps one company per domain, whatever its case, including on update', async () => {
    const d = domain();
    const first = await stack.api.post('/companies', { name: 'One', domain: d });
    expect(first.status).toBe(201);
    const dup = await stack.api.post('/companies', { name: 'Two', domain: d.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'domain', code: 'duplicate' }] });
    const other = (await stack.api.post('/companies', { name: 'Three' })).body.data;
    expect((await stack.api.patch(`/companies/${other.id}`, { domain: d })).status).toBe(409);
    const racers = await Promise.all(Array.from({ length: 6 }, () => stack.api.post('/companies', { name: 'Racer', domain: `race.${d}` })));
    expect(racers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racers.filter((r) => r.status === 409)).toHaveLength(5);
  });

  it('lists with paging and filters by domain and name', async () => {
    const tag = `qx${randomBytes(3).toString('hex')}`;
    const d = domain();
    const a = (await stack.api.post('/companies', { name: `Alpha ${tag}`, domain: d })).body.data;
    const b = (await stack.api.post('/companies', { name: `Beta ${tag}` })).body.data;
    expect((await stack.api.listAll(`/companies?search=${tag.toUpperCase()}`)).map((c) => c.id)).toEqual([a.id, b.id]);
    expect((await stack.api.listAll(`/companies?domain=${d.toUpperCase()}`)).map((c) => c.id)).toEqual([a.id]);
    const page = await stack.api.get(`/companies?search=${tag}&limit=1`);
    expect(page.body).toMatchObject({ data: [a], has_more: true });
    const rest = await stack.api.get(`/companies?search=${tag}&limit=1&cursor=${page.body.next_cursor}`);
    expect(rest.body).toEqual({ data: [b], has_more: false });
    expect((await stack.api.get('/companies?limit=500')).status).toBe(400);
  });

  it('unlinks its contacts when deleted', async () => {
    const company = (await stack.api.post('/companies', { name: 'Doomed' })).body.data;
    const contact = (await stack.api.post('/contacts', { email: `doomed.${randomBytes(4).toString('hex')}@example.com`, company_id: company.id })).body.data;
    expect((await stack.api.get(`/contacts/${contact.id}`)).body.data.relationships.company).toEqual({ type: 'company', id: company.id, name: 'Doomed' });
    expect((await stack.api.delete(`/companies/${company.id}`)).status).toBe(204);
    const after = await stack.api.get(`/contacts/${contact.id}`);
    expect(after.status).toBe(200);
    expect(after.body.data).toMatchObject({ company_id: null, relationships: { company: null, owner: null } });
    expect(after.body.included).toEqual([]);
  });

  it('answers 404 for unknown and malformed ids', async () => {
    expect((await stack.api.get('/companies/comp_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    expect((await stack.api.patch('/companies/nope', { name: 'x' })).status).toBe(404);
    expect((await stack.api.delete('/companies/comp_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
  });
});
