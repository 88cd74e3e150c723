import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

/**
 * POST /objects/:slug/records/query: the query language over a custom object's records, `values.<name>`
 * typed by its fields, and through each reference field the record it names: a contact (joined in the
 * contacts service), a deal (answered by the deals service) or another custom object's record.
 */
describe('Querying custom object records (POST /objects/:slug/records/query)', () => {
  let stack: TestStack;
  const tag = randomBytes(3).toString('hex');
  const projects = `projects_${tag}`;
  const programs = `programs_${tag}`;
  const made: Record<string, { id: string; values: Record<string, unknown> }> = {};

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const create = async (path: string, body: unknown) => {
      const res = await stack.api.post(path, body);
      if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
      return res.body.data;
    };
    await create('/objects', { name: 'Program', slug: programs, fields: [{ name: 'title', type: 'string' }] });
    await create('/objects', {
      name: 'Project',
      slug: projects,
      fields: [
        { name: 'title', type: 'string' },
        { name: 'budget', type: 'number' },
        { name: 'phase', type: 'enum', enum_values: ['plan', 'build', 'done'] },
        { name: 'lead', type: 'reference', reference_target: 'contacts' },
        { name: 'deal', type: 'reference', reference_target: 'deals' },
        { name: 'program', type: 'reference', reference_target: programs },
      ],
    });
    const pipeline = (await stack.api.post('/pipelines', { name: 'P', stages: [{ name: 'New', type: 'open' }] })).body.data;
    const ada = await create('/contacts', { email: `ada.${tag}@example.com`, first_name: 'Ada' });
    const bo = await create('/contacts', { email: `bo.${tag}@example.com`, first_name: 'Bo' });
    const big = await create('/deals', { name: 'Big', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 90_000 });
    const small = await create('/deals', { name: 'Small', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 100 });
    const apollo = await create(`/objects/${programs}/records`, { values: { title: 'Apollo' } });
    const specs: Record<string, Record<string, unknown>> = {
      alpha: { title: 'Alpha', budget: 500, phase: 'plan', lead: ada.id, deal: big.id, program: apollo.id },
      beta: { title: 'Beta', budget: 1500, phase: 'build', lead: bo.id, deal: small.id },
      gamma: { title: 'Gamma', budget: 2500, phase: 'done', lead: ada.id },
      delta: { title: 'Delta' },
    };
    for (const [label, values] of Object.entries(specs)) made[label] = await create(`/objects/${projects}/records`, { values });
    // A record of another object, with a field of the same name, must never be in a projects answer.
    await create(`/objects/${programs}/records`, { values: { title: 'Alpha' } });
  });
  afterAll(() => stack?.stop());

  const query = (body: unknown, slug = projects) => stack.api.post(`/objects/${slug}/records/query`, body);
  const labels = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((r) => Object.entries(made).find(([, m]) => m.id === r.id)?.[0] ?? r.id);

  it('serves the items GET /objects/:slug/records lists, and only this object’s records', async () => {
    const res = await query({ limit: 200, sort: [{ field: 'created_at' }] });
    expect(res.status).toBe(200);
    const listed = (await stack.api.get(`/objects/${projects}/records?limit=200`)).body.data;
    expect(res.body.data).toEqual(listed);
    expect((await query({ filter: { 'values.title': 'Alpha' } })).body.data.map((r: { id: string }) => r.id)).toEqual([made.alpha.id]);
  });

  it('filters and sorts on values typed by the object’s fields, page after page', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await query({
        filter: { $or: [{ 'values.budget': { $gte: 1000 } }, { 'values.phase': 'plan' }] },
        sort: [{ field: 'values.budget', direction: 'desc' }],
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(res.status).toBe(200);
      seen.push(...labels(res));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['gamma', 'beta', 'alpha']);
    expect(labels(await query({ filter: { 'values.budget': null } }))).toEqual(['delta']);
    expect(labels(await query({ filter: { $not: { 'values.phase': { $in: ['plan', 'build'] } } }, sort: [{ field: 'values.title' }] }))).toEqual([
      'delta',
      'gamma',
    ]);
  });

  it('reaches the contact, deal and custom record a reference field names', async () => {
    expect(labels(await query({ filter: { 'values.lead.first_name': 'Ada' }, sort: [{ field: 'values.title' }] }))).toEqual(['alpha', 'gamma']);
    expect(labels(await query({ filter: { 'values.deal.value': { $gt: 1000 } } }))).toEqual(['alpha']);
    expect(labels(await query({ filter: { 'values.deal.name': { $ne: 'Big' } }, sort: [{ field: 'values.title' }] }))).toEqual(['beta', 'delta', 'gamma']);
    expect(labels(await query({ filter: { 'values.program.values.title': 'Apollo' } }))).toEqual(['alpha']);
  });

  it('returns the paths asked for, nested, with null where a reference names nothing', async () => {
    const res = await query({
      filter: { 'values.title': { $in: ['Alpha', 'Delta'] } },
      sort: [{ field: 'values.title' }],
      fields: ['values.title', 'values.lead.email', 'values.deal.name', 'values.program.values.title'],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        id: made.alpha.id,
        values: { title: 'Alpha', lead: { email: `ada.${tag}@example.com` }, deal: { name: 'Big' }, program: { values: { title: 'Apollo' } } },
      },
      { id: made.delta.id, values: { title: 'Delta', lead: null, deal: null, program: null } },
    ]);
  });

  it('names unknown paths, and answers 404 for unknown and built-in objects', async () => {
    const bad = await query({ filter: { 'values.nope': 1, 'values.budget': 'lots' }, fields: ['values.lead.nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['filter.values.nope', 'filter.values.budget', 'fields.0']);
    expect((await query({}, `nothing_${tag}`)).status).toBe(404);
    const builtIn = await query({}, 'contacts');
    expect(builtIn.status).toBe(404);
    expect(builtIn.body.error.message).toContain('/contacts');
  });
});
