import { startStack, TestStack } from '../support';

/** One valid and one invalid value per field type; `reference` values are filled in once a contact exists. */
const TYPE_CASES: { type: string; extra?: Record<string, unknown>; valid: unknown; invalid: unknown[] }[] = [
  { type: 'string', valid: 'hello', invalid: [42] },
  { type: 'number', valid: 12.5, invalid: ['12'] },
  { type: 'boolean', valid: false, invalid: ['true'] },
  { type: 'date', valid: '2030-02-28', invalid: ['2030-02-30', '2030-02-28T10:00:00Z'] },
  { type: 'datetime', valid: '2030-02-28T10:00:00+02:00', invalid: ['2030-02-28', '2030-02-28T10:00:00'] },
  { type: 'email', valid: 'ada@example.com', invalid: ['ada@'] },
  { type: 'url', valid: 'https://example.com/a?b=1', invalid: ['example.com', 'ftp://example.com'] },
  { type: 'phone', valid: '+14155550123', invalid: ['4155550123', '+1415', '+1 415 555 0123'] },
  { type: 'currency', valid: 199900, invalid: [19.99] },
  { type: 'enum', extra: { enum_values: ['gold', 'silver'] }, valid: 'gold', invalid: ['bronze'] },
  { type: 'reference', extra: { reference_target: 'contacts' }, valid: 'CONTACT', invalid: ['cont_01aaaaaaaaaaaaaaaaaaaaaaaa'] },
  { type: 'array', extra: { items: { type: 'email' } }, valid: ['a@example.com', 'b@example.com'], invalid: [['a@example.com', 'nope'], 'a@example.com'] },
];

describe('Custom objects and fields', () => {
  let stack: TestStack;
  let contactId: string;
  let counter = 0;
  const slug = (base: string) => `${base}_${++counter}`;
  const value = (v: unknown) => (v === 'CONTACT' ? contactId : v);

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
    contactId = (await stack.api.post('/contacts', { email: 'ref@example.com' })).body.data.id;
  });
  afterAll(() => stack.stop());

  const createType = async (body: Record<string, unknown>) => {
    const res = await stack.api.post('/objects', body);
    if (res.status !== 201) throw new Error(`POST /objects answered ${res.status}: ${res.text}`);
    return res.body.data;
  };

  describe('object type lifecycle', () => {
    it('creates, lists, gets, updates, archives and re-activates a custom object', async () => {
      const s = slug('project');
      const created = await stack.api.post('/objects', {
        name: 'Project',
        slug: s,
        enforcement_level: 'soft',
        fields: [
          { name: 'title', type: 'string', required: true },
          { name: 'budget', label: 'Budget', type: 'currency' },
        ],
      });
      expect(created.status).toBe(201);
      expect(created.body.data).toEqual({
        id: expect.stringMatching(/^ot_[0-9a-z]{26}$/),
        name: 'Project',
        slug: s,
        kind: 'custom',
        status: 'active',
        enforcement_level: 'soft',
        accepts_custom_fields: true,
        fields: [
          { name: 'title', label: 'title', type: 'string', required: true },
          { name: 'budget', label: 'Budget', type: 'currency' },
        ],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const id = created.body.data.id;
      expect((await stack.api.get(`/objects/${s}`)).body.data).toEqual(created.body.data);
      expect((await stack.api.get(`/objects/${id}`)).body.data).toEqual(created.body.data);
      expect((await stack.api.listAll('/objects')).map((o) => o.id)).toContain(id);

      const renamed = await stack.api.patch(`/objects/${s}`, { name: 'Client project', enforcement_level: 'hard' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({ name: 'Client project', enforcement_level: 'hard', slug: s });

      const field = await stack.api.post(`/objects/${s}/fields`, { name: 'site', type: 'url' });
      expect(field.status).toBe(201);
      expect(field.body.data.fields.map((f: { name: string }) => f.name)).toEqual(['title', 'budget', 'site']);

      const record = await stack.api.post(`/objects/${s}/records`, { values: { title: 'Roof' } });
      expect(record.status).toBe(201);

      const archived = await stack.api.patch(`/objects/${s}`, { status: 'archived' });
      expect(archived.body.data.status).toBe('archived');
      const schema = await stack.api.get('/schema');
      expect(schema.body.data.objects.map((o: { slug: string }) => o.slug)).not.toContain(s);
      expect((await stack.api.listAll('/objects?status=archived')).map((o) => o.id)).toContain(id);
      expect((await stack.api.listAll('/objects?status=active')).map((o) => o.id)).not.toContain(id);
      const refused = await stack.api.post(`/objects/${s}/records`, { values: { title: 'Walls' } });
      expect(refused.status).toBe(409);
      expect((await stack.api.patch(`/objects/${s}/records/${record.body.data.id}`, { values: { title: 'x' } })).status).toBe(409);
      expect((await stack.api.get(`/objects/${s}/records/${record.body.data.id}`)).status).toBe(200);

      expect((await stack.api.patch(`/objects/${s}`, { status: 'active' })).body.data.status).toBe('active');
      expect((await stack.api.post(`/objects/${s}/records`, { values: { title: 'Walls' } })).status).toBe(201);
      expect((await stack.api.get('/schema')).body.data.objects.map((o: { slug: string }) => o.slug)).toContain(s);
    });

    it('rejects duplicate and reserved slugs, inconsistent definitions and unknown reference targets', async () => {
      const s = slug('dup');
      await createType({ name: 'Dup', slug: s });
      const duplicate = await stack.api.post('/objects', { name: 'Dup again', slug: s });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error.details).toEqual([expect.objectContaining({ field: 'slug', code: 'duplicate' })]);

      const reserved = await stack.api.post('/objects', { name: 'Contacts', slug: 'contacts' });
      expect(reserved.status).toBe(400);
      expect(reserved.body.error.details[0]).toMatchObject({ field: 'slug', code: 'reserved' });

      const bad = await stack.api.post('/objects', {
        name: 'Bad',
        slug: slug('bad'),
        enforcement_level: 'strict',
        fields: [
          { name: 'tier', type: 'enum' },
          { name: 'owner', type: 'reference', reference_target: 'nothing_here' },
          { name: 'tags', type: 'array' },
          { name: 'tier', type: 'string' },
          { name: 'Bad Name', type: 'text' },
        ],
      });
      expect(bad.status).toBe(400);
      const fields = bad.body.error.details.map((d: { field: string }) => d.field).sort();
      expect(fields).toEqual(['enforcement_level', 'fields.4.name', 'fields.4.type']);
      const semantic = await stack.api.post('/objects', {
        name: 'Bad',
        slug: slug('bad'),
        fields: [
          { name: 'tier', type: 'enum' },
          { name: 'owner', type: 'reference', reference_target: 'nothing_here' },
          { name: 'tags', type: 'array' },
          { name: 'tier', type: 'string' },
          { name: 'flag', type: 'boolean', unique: true },
        ],
      });
      expect(semantic.status).toBe(400);
      expect(semantic.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
        'fields.0.enum_values:invalid_value',
        'fields.1.reference_target:not_found',
        'fields.2.items:invalid_value',
        'fields.3.name:duplicate',
        'fields.4.unique:invalid_value',
      ]);

      const taken = await stack.api.post(`/objects/${s}/fields`, { name: 'x', type: 'string' });
      expect(taken.status).toBe(201);
      expect((await stack.api.post(`/objects/${s}/fields`, { name: 'x', type: 'number' })).status).toBe(409);
      expect((await stack.api.get('/objects/no_such_object')).status).toBe(404);
      expect((await stack.api.post('/objects/no_such_object/records', { values: {} })).status).toBe(404);
      expect((await stack.api.patch('/objects/contacts', { name: 'People' })).status).toBe(400);
    });
  });

  describe.each(['hard', 'soft', 'none'] as const)('enforcement level %s', (level) => {
    let s: string;
    beforeAll(async () => {
      s = slug(`typed_${level}`);
      await createType({
        name: `Typed ${level}`,
        slug: s,
        enforcement_level: level,
        fields: TYPE_CASES.map((c) => ({ name: `f_${c.type}`, type: c.type, ...c.extra })),
      });
    });

    it.each(TYPE_CASES.map((c) => [c.type, c] as const))('accepts a valid %s value without warnings', async (_type, c) => {
      const res = await stack.api.post(`/objects/${s}/records`, { values: { [`f_${c.type}`]: value(c.valid) } });
      expect(res.status).toBe(201);
      expect(res.body.warnings).toBeUndefined();
      expect(res.body.data.values).toEqual({ [`f_${c.type}`]: value(c.valid) });
    });

    it.each(TYPE_CASES.flatMap((c) => c.invalid.map((bad) => [c.type, bad] as const)))('handles the invalid %s value %j', async (type, bad) => {
      const field = `f_${type}`;
      const res = await stack.api.post(`/objects/${s}/records`, { values: { [field]: bad } });
      if (level === 'hard') {
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
        expect(res.body.error.details).toHaveLength(1);
        expect(res.body.error.details[0].field).toMatch(new RegExp(`^values\\.${field}(\\.\\d+)?$`));
        expect(res.body.error.details[0].code).toMatch(/^(invalid_type|invalid_value|not_found)$/);
        return;
      }
      expect(res.status).toBe(201);
      expect(res.body.data.values).toEqual({ [field]: bad });
      if (level === 'soft') {
        expect(res.body.warnings).toEqual([
          { field: expect.stringMatching(new RegExp(`^values\\.${field}(\\.\\d+)?$`)), code: expect.any(String), message: expect.any(String) },
        ]);
      } else {
        expect(res.body.warnings).toBeUndefined();
      }
    });

    it('treats unknown fields per the level', async () => {
      const res = await stack.api.post(`/objects/${s}/records`, { values: { surprise: 1 } });
      if (level === 'hard')
        expect(res.body.error.details).toEqual([{ field: 'values.surprise', code: 'unknown_field', message: "unknown field 'values.surprise'" }]);
      if (level === 'soft')
        expect(res.body.warnings).toEqual([{ field: 'values.surprise', code: 'unknown_field', message: "unknown field 'values.surprise'" }]);
      if (level === 'none') expect(res.body).toEqual({ data: expect.objectContaining({ values: { surprise: 1 } }) });
    });
  });

  describe('required and unique', () => {
    it('enforces both under hard, including between racing writes', async () => {
      const s = slug('account');
      await createType({
        name: 'Account',
        slug: s,
        fields: [
          { name: 'code', type: 'string', required: true, unique: true },
          { name: 'billing_email', type: 'email', unique: true },
        ],
      });
      const missing = await stack.api.post(`/objects/${s}/records`, { values: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.error.details).toEqual([{ field: 'values.code', code: 'required', message: 'values.code is required' }]);

      expect((await stack.api.post(`/objects/${s}/records`, { values: { code: 'A1', billing_email: 'Bill@example.com' } })).status).toBe(201);
      const dup = await stack.api.post(`/objects/${s}/records`, { values: { code: 'A1', billing_email: 'bill@EXAMPLE.com' } });
      expect(dup.status).toBe(400);
      expect(dup.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
        'values.billing_email:duplicate',
        'values.code:duplicate',
      ]);

      const racing = await Promise.all(Array.from({ length: 6 }, () => stack.api.post(`/objects/${s}/records`, { values: { code: 'RACE' } })));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);

      const other = await stack.api.post(`/objects/${s}/records`, { values: { code: 'B2' } });
      const clear = await stack.api.patch(`/objects/${s}/records/${other.body.data.id}`, { values: { code: null } });
      expect(clear.status).toBe(400);
      expect(clear.body.error.details[0]).toMatchObject({ field: 'values.code', code: 'required' });
      // Updating a record to its own unique value is not a duplicate.
      expect((await stack.api.patch(`/objects/${s}/records/${other.body.data.id}`, { values: { code: 'B2' } })).status).toBe(200);
    });

    it('warns about both under soft and still writes', async () => {
      const s = slug('soft_account');
      await createType({ name: 'Soft account', slug: s, enforcement_level: 'soft', fields: [{ name: 'code', type: 'string', required: true, unique: true }] });
      await stack.api.post(`/objects/${s}/records`, { values: { code: 'X' } });
      const dup = await stack.api.post(`/objects/${s}/records`, { values: { code: 'X' } });
      expect(dup.status).toBe(201);
      expect(dup.body.warnings).toEqual([{ field: 'values.code', code: 'duplicate', message: expect.stringContaining('already used') }]);
      const missing = await stack.api.post(`/objects/${s}/records`, { values: {} });
      expect(missing.status).toBe(201);
      expect(missing.body.warnings).toEqual([{ field: 'values.code', code: 'required', message: 'values.code is required' }]);
    });
  });

  describe('records', () => {
    it('pages, reads, merges updates, deletes, and references records of custom objects', async () => {
      const parent = slug('site');
      const child = slug('visit');
      await createType({ name: 'Site', slug: parent, fields: [{ name: 'name', type: 'string' }] });
      await createType({
        name: 'Visit',
        slug: child,
        fields: [
          { name: 'site', type: 'reference', reference_target: parent },
          { name: 'notes', type: 'string' },
        ],
      });
      const sites = [];
      for (let i = 0; i < 5; i++) sites.push((await stack.api.post(`/objects/${parent}/records`, { values: { name: `s${i}` } })).body.data);
      expect(sites[0]).toEqual({
        id: expect.stringMatching(/^rec_[0-9a-z]{26}$/),
        object: parent,
        object_type_id: expect.stringMatching(/^ot_/),
        values: { name: 's0' },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const first = await stack.api.get(`/objects/${parent}/records?limit=2`);
      expect(first.body.data.map((r: { id: string }) => r.id)).toEqual(sites.slice(0, 2).map((r) => r.id));
      expect(first.body.has_more).toBe(true);
      expect((await stack.api.listAll(`/objects/${parent}/records`, 2)).map((r) => r.id)).toEqual(sites.map((r) => r.id));
      const foreign = await stack.api.get(`/objects/${child}/records?cursor=${first.body.next_cursor}`);
      expect(foreign.status).toBe(400);

      const visit = await stack.api.post(`/objects/${child}/records`, { values: { site: sites[1].id, notes: 'ok' } });
      expect(visit.status).toBe(201);
      const wrongKind = await stack.api.post(`/objects/${child}/records`, { values: { site: visit.body.data.id } });
      expect(wrongKind.body.error.details).toEqual([expect.objectContaining({ field: 'values.site', code: 'not_found' })]);

      const patched = await stack.api.patch(`/objects/${child}/records/${visit.body.data.id}`, { values: { notes: null } });
      expect(patched.body.data.values).toEqual({ site: sites[1].id });
      expect((await stack.api.get(`/objects/${parent}/records/${visit.body.data.id}`)).status).toBe(404);
      expect((await stack.api.delete(`/objects/${child}/records/${visit.body.data.id}`)).status).toBe(204);
      expect((await stack.api.get(`/objects/${child}/records/${visit.body.data.id}`)).status).toBe(404);
      expect((await stack.api.get('/objects/contacts/records')).status).toBe(404);
    });
  });

  describe('custom fields on built-in objects', () => {
    it('adds fields to contacts and companies, validates their values and returns them', async () => {
      const added = await stack.api.post('/objects/contacts/fields', { name: 'mobile', type: 'phone', unique: true });
      expect(added.status).toBe(201);
      expect(added.body.data).toMatchObject({ slug: 'contacts', kind: 'built_in', enforcement_level: 'hard' });
      expect(added.body.data.fields).toContainEqual({ name: 'mobile', label: 'mobile', type: 'phone', unique: true, custom: true });
      await stack.api.post('/objects/contacts/fields', { name: 'segments', type: 'array', items: { type: 'enum', enum_values: ['smb', 'ent'] } });
      expect((await stack.api.post('/objects/contacts/fields', { name: 'email', type: 'string' })).status).toBe(409);

      const bad = await stack.api.post('/contacts', { email: 'cf1@example.com', custom_fields: { mobile: '555-0100', segments: ['smb', 'mid'], other: 1 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
        'custom_fields.mobile',
        'custom_fields.other',
        'custom_fields.segments.1',
      ]);

      const created = await stack.api.post('/contacts', { email: 'cf1@example.com', custom_fields: { mobile: '+447700900123', segments: ['smb'] } });
      expect(created.status).toBe(201);
      const got = await stack.api.get(`/contacts/${created.body.data.id}`);
      expect(got.body.data.custom_fields).toEqual({ mobile: '+447700900123', segments: ['smb'] });
      const dup = await stack.api.post('/contacts', { email: 'cf2@example.com', custom_fields: { mobile: '+447700900123' } });
      expect(dup.body.error.details).toEqual([expect.objectContaining({ field: 'custom_fields.mobile', code: 'duplicate' })]);

      const patched = await stack.api.patch(`/contacts/${created.body.data.id}`, { custom_fields: { segments: null } });
      expect(patched.body.data.custom_fields).toEqual({ mobile: '+447700900123' });

      await stack.api.post('/objects/companies/fields', { name: 'founded', type: 'date', required: true });
      expect((await stack.api.post('/companies', { name: 'NoDate' })).body.error.details).toEqual([
        { field: 'custom_fields.founded', code: 'required', message: 'custom_fields.founded is required' },
      ]);
      const company = await stack.api.post('/companies', { name: 'Dated', custom_fields: { founded: '1999-12-31' } });
      expect(company.body.data.custom_fields).toEqual({ founded: '1999-12-31' });

      const stages = await stack.api.post('/objects/stages/fields', { name: 'x', type: 'string' });
      expect(stages.status).toBe(400);
      const schema = (await stack.api.get('/schema')).body.data.objects;
      expect(schema.find((o: { slug: string }) => o.slug === 'stages').accepts_custom_fields).toBe(false);
      expect(schema.find((o: { slug: string }) => o.slug === 'companies').fields).toContainEqual({
        name: 'founded',
        label: 'founded',
        type: 'date',
        required: true,
        custom: true,
      });
    });
  });
});
