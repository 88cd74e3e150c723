import { Client } from 'pg';
import { startStack, TestStack } from '../support/stack';

/**
 * Names every JavaScript object answers to (`constructor`, `toString`, `__proto__`, …) are never taken for
 * an entry of a lookup: as an object name, a key, a query path or a new slug or field name they are
 * answered like any other unknown or reserved name, never with a 200 that ignored them or a 5xx.
 */
describe('names every JavaScript object has', () => {
  let stack: TestStack;
  const INHERITED = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'prototype'];

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const created = await stack.api.post('/objects', { name: 'Project', slug: 'project', fields: [{ name: 'code', type: 'string', unique: true }] });
    expect(created.status).toBe(201);
  });
  afterAll(() => stack?.stop());

  /** The fields a 400 validation_failed names, with their codes. */
  const problems = (res: { status: number; body: { error: { code: string; details?: Array<{ field: string; code: string }> } } }) => {
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    return (res.body.error.details ?? []).map((d) => `${d.field}:${d.code}`);
  };

  it('answers GET /changes?object=<name> 400 like any unknown object', async () => {
    for (const name of INHERITED) {
      const res = await stack.api.get(`/changes?object=${encodeURIComponent(name)}`);
      expect([name, res.status]).toEqual([name, 400]);
    }
    expect((await stack.api.get('/changes?object=constructor')).body.error.details).toEqual([
      expect.objectContaining({ field: 'object', code: 'unknown_object' }),
    ]);
  });

  it('reserves them as custom object slugs and field names', async () => {
    expect(problems(await stack.api.post('/objects', { name: 'X', slug: 'constructor' }))).toEqual(['slug:reserved']);
    expect(problems(await stack.api.post('/objects', { name: 'X', slug: 'prototype' }))).toEqual(['slug:reserved']);
    for (const name of INHERITED) {
      const res = await stack.api.post('/objects', { name: 'X', slug: 'gadget', fields: [{ name, type: 'string' }] });
      expect(problems(res)).toEqual([expect.stringMatching(/^fields\.0\.name:/)]);
      expect(problems(await stack.api.post('/objects/project/fields', { name, type: 'string' }))).toEqual([expect.stringMatching(/^name:/)]);
      expect(problems(await stack.api.post('/objects/contacts/fields', { name, type: 'string' }))).toEqual([expect.stringMatching(/^name:/)]);
      expect(problems(await stack.api.patch('/objects/project/fields/code', { name }))).toEqual([expect.stringMatching(/^name:/)]);
    }
    expect(problems(await stack.api.post('/objects/deals/fields', { name: 'constructor', type: 'string' }))).toEqual(['name:reserved']);
    expect((await stack.api.get('/objects/gadget')).status).toBe(404);
    const fields = (await stack.api.get('/objects/project')).body.data.fields.map((f: { name: string }) => f.name);
    expect(fields).toEqual(['code']);
  });

  it('answers them in query paths, operators, sorts and field lists as unknown, never 200 or 5xx', async () => {
    for (const route of ['/contacts/query', '/deals/query', '/objects/project/records/query']) {
      for (const path of ['toString', 'valueOf', 'constructor.name', '__proto__', 'custom_fields.toString', 'values.constructor', 'values.toString']) {
        for (const body of [{ filter: { [path]: 'x' } }, { sort: [{ field: path }] }, { fields: [path] }]) {
          const res = await stack.api.post(route, body);
          expect([route, JSON.stringify(body), res.status]).toEqual([route, JSON.stringify(body), 400]);
        }
      }
      const operator = await stack.api.post(route, { filter: { id: { toString: 'x' } } });
      expect([route, operator.status]).toEqual([route, 400]);
    }
    expect(problems(await stack.api.post('/contacts/query', { filter: { toString: 'x' } }))).toEqual(['filter.toString:unknown_field']);
    expect(problems(await stack.api.get('/contacts?toString=1'))).toEqual(['toString:unknown_field']);
    expect(problems(await stack.api.get('/deals?sort=toString'))).toHaveLength(1);
  });

  it('refuses them as keys of a body rather than dropping them', async () => {
    expect(problems(await stack.api.post('/contacts', { email: 'keys@inherited.example', metadata: { valueOf: 1 } }))).toEqual([
      'metadata.valueOf:unknown_field',
    ]);
    expect(problems(await stack.api.post('/objects/project/records', { values: { code: 'a', toString: 'x' } }))).toEqual(['values.toString:unknown_field']);
    expect(problems(await stack.api.post('/contacts', { email: 'keys@inherited.example', hasOwnProperty: 'x' }))).toEqual(['hasOwnProperty:unknown_field']);
    expect((await stack.api.post('/contacts/query', { filter: { email: 'keys@inherited.example' } })).body.data).toEqual([]);
  });

  it('still serves a custom object slugged constructor, with a reference to itself, made before the names were reserved', async () => {
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const fields = [
        { name: 'code', label: 'code', type: 'string' },
        { name: 'parent', label: 'parent', type: 'reference', reference_target: 'constructor' },
      ];
      await db.query(`INSERT INTO contacts.object_types (id, slug, name, enforcement_level, fields) VALUES ($1, 'constructor', 'Legacy', 'hard', $2)`, [
        `ot_${'0'.repeat(25)}1`,
        JSON.stringify(fields),
      ]);
    } finally {
      await db.end();
    }
    const root = await stack.api.post('/objects/constructor/records', { values: { code: 'root' } });
    expect(root.status).toBe(201);
    const child = await stack.api.post('/objects/constructor/records', { values: { code: 'child', parent: root.body.data.id } });
    expect(child.status).toBe(201);
    const missing = await stack.api.post('/objects/constructor/records', { values: { code: 'orphan', parent: `rec_${'0'.repeat(26)}` } });
    expect(problems(missing)).toEqual(['values.parent:not_found']);
    const found = await stack.api.post('/objects/constructor/records/query', {
      filter: { 'values.parent.values.code': 'root' },
      fields: ['values.code', 'values.parent.values.code'],
    });
    expect(found.status).toBe(200);
    expect(found.body.data).toEqual([{ id: child.body.data.id, values: { code: 'child', parent: { values: { code: 'root' } } } }]);
  });
});
