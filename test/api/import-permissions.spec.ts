import { IMPORT_OBJECTS, objectResource } from '@crm/contracts';
import { eventually, startStack, TestStack } from '../support';

/**
 * An import writes records of its object, so it takes write on that object as well as `imports:write`;
 * and which rows created or updated says which records existed, so only a caller that may read the object
 * sees that (docs/imports.md, "Who sees what").
 */
describe('Imports within the key', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
  });
  afterAll(() => stack.stop());

  const keyWith = async (scopes: string[]): Promise<string> => {
    const res = await stack.api.post('/apikeys', { name: `imports ${scopes.join(' ')}`, scopes });
    if (res.status !== 201) throw new Error(`POST /apikeys answered ${res.status}: ${res.text}`);
    return res.body.data.key;
  };
  const upload = async (key: string, object: string, csv: string) => {
    const res = await fetch(`${stack.gateway.url}/imports?object=${object}`, {
      method: 'POST',
      headers: { 'X-Api-Key': key, 'Content-Type': 'text/csv' },
      body: csv,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const finished = (id: string) =>
    eventually(async () => {
      const job = (await stack.api.get(`/imports/${id}`)).body.data;
      return ['completed', 'failed'].includes(job.status) ? job : undefined;
    });
  const importIds = async () => (await stack.api.listAll('/imports')).map((job: { id: string }) => job.id);

  it('refuses an import without write on its object, naming the permission, and makes no job', async () => {
    const importsOnly = await keyWith(['imports:write', 'imports:read']);
    const before = await importIds();
    for (const object of IMPORT_OBJECTS) {
      const res = await upload(importsOnly, object, 'name\nAcme\n');
      const permission = `${objectResource(object)}:write`;
      expect([object, res.status, res.body.error.code]).toEqual([object, 403, 'forbidden']);
      expect(res.body.error.message).toContain(permission);
      expect(res.body.error.details).toEqual([{ field: 'permission', code: 'missing_permission', message: permission }]);
    }
    // Write on another object does not stand in for the one imported.
    const dealsWriter = await keyWith(['imports:write', 'deals:write']);
    const companies = await upload(dealsWriter, 'companies', 'name\nAcme\n');
    expect([companies.status, companies.body.error.details]).toEqual([403, [{ field: 'permission', code: 'missing_permission', message: 'companies:write' }]]);
    expect(await importIds()).toEqual(before);
  });

  it('shows which rows created, updated or failed only to a caller that may read the object', async () => {
    const tag = Date.now().toString(36);
    const existing = (await stack.api.post('/companies', { name: 'Known', domain: `known-${tag}.test` })).body.data;
    expect(existing.id).toEqual(expect.any(String));
    const writer = await keyWith(['imports:write', 'imports:read', 'companies:write']);
    // A row without a name updates a company whose domain is taken and is refused otherwise: the outcome would say which domains exist.
    const csv = ['name,domain', `,known-${tag}.test`, `,unknown-${tag}.test`, `New,new-${tag}.test`].join('\n');
    const accepted = await upload(writer, 'companies', csv);
    expect(accepted.status).toBe(202);
    expect(accepted.body.data.counts).toEqual({ total: 3, processed: 0 });
    expect(accepted.body.data).not.toHaveProperty('errors');
    const id = accepted.body.data.id;

    const full = await finished(id);
    expect(full.counts).toEqual({ total: 3, processed: 3, created: 1, updated: 1, failed: 1, skipped: 0 });
    expect(full.errors.map((e: { line: number; field: string }) => [e.line, e.field])).toEqual([[3, 'name']]);

    const asWriter = stack.api.withKey(writer);
    const hidden = (await asWriter.get(`/imports/${id}`)).body.data;
    expect(hidden).toMatchObject({ id, object: 'companies', status: 'completed', counts: { total: 3, processed: 3 }, failure_reason: null });
    expect(hidden.counts).toEqual({ total: 3, processed: 3 });
    expect(hidden).not.toHaveProperty('errors');
    expect(hidden).not.toHaveProperty('warnings');
    const listed = (await asWriter.listAll('/imports')).find((job: { id: string }) => job.id === id);
    expect(listed.counts).toEqual({ total: 3, processed: 3 });
    expect(listed).not.toHaveProperty('errors');

    // Read on the object is what shows it, whoever made the import; read on another object is not.
    const otherReader = stack.api.withKey(await keyWith(['imports:read', 'contacts:read']));
    expect((await otherReader.get(`/imports/${id}`)).body.data.counts).toEqual({ total: 3, processed: 3 });
    const reader = stack.api.withKey(await keyWith(['imports:read', 'companies:read']));
    const shown = (await reader.get(`/imports/${id}`)).body.data;
    expect(shown.counts).toEqual(full.counts);
    expect(shown.errors).toEqual(full.errors);
  });
});
