import 'reflect-metadata';
import { BUILT_IN_OBJECTS } from '@crm/contracts';
import { getMetadataStorage } from 'class-validator';
import { startStack, TestStack } from '../support';

interface Field {
  name: string;
  type: string;
  required?: boolean;
  unique?: boolean;
  enum_values?: string[];
  reference_target?: string;
  items?: { type: string; fields?: Field[] };
  custom?: boolean;
  update_only?: boolean;
}

interface Rule {
  name: string;
  each: boolean;
  constraints: unknown[];
}

/** The validators of a request class, read straight from class-validator, property by property. */
function rulesOf(type: Function): Map<string, Rule[]> {
  const rules = new Map<string, Rule[]>();
  for (const meta of getMetadataStorage().getTargetValidationMetadatas(type, '', true, false)) {
    const rule = { name: meta.name ?? meta.type, each: !!meta.each, constraints: meta.constraints ?? [] };
    rules.set(meta.propertyName, [...(rules.get(meta.propertyName) ?? []), rule]);
  }
  // The container of custom values is not a field of its own (its fields are listed instead).
  rules.delete('custom_fields');
  return rules;
}

/** What the validators say a property's type must be, for the kinds the schema distinguishes. */
function expectedTypes(rules: Rule[]): string[] {
  const has = (name: string) => rules.some((r) => r.name === name && !r.each);
  if (has('isEmail')) return ['email'];
  if (has('isIn')) return ['enum'];
  if (has('isRFC3339')) return ['datetime'];
  if (has('isInt')) return ['number', 'currency'];
  if (has('isNumber')) return ['number'];
  if (has('isBoolean')) return ['boolean'];
  if (has('isArray')) return ['array'];
  if (has('isMetadata')) return ['object'];
  return ['string', 'phone', 'reference'];
}

describe('GET /schema', () => {
  let stack: TestStack;
  let objects: { slug: string; kind: string; enforcement_level: string; fields: Field[] }[];

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const res = await stack.api.get('/schema');
    expect(res.status).toBe(200);
    objects = res.body.data.objects;
  });
  afterAll(() => stack.stop());

  const object = (slug: string) => objects.find((o) => o.slug === slug)!;
  const field = (slug: string, name: string) => object(slug).fields.find((f) => f.name === name);

  it('lists the built-in objects with the fields the spec names', () => {
    expect(objects.map((o) => o.slug)).toEqual(['contacts', 'companies', 'deals', 'products', 'pipelines', 'stages', 'activities', 'tasks']);
    expect(objects.every((o) => o.kind === 'built_in' && o.enforcement_level === 'hard')).toBe(true);
    expect(field('contacts', 'email')).toMatchObject({ type: 'email', required: true, unique: true });
    expect(field('contacts', 'first_name')).toMatchObject({ type: 'string' });
    expect(field('contacts', 'first_name')?.required).toBeUndefined();
    expect(field('contacts', 'stage')).toMatchObject({ type: 'enum', enum_values: ['lead', 'prospect', 'customer', 'churned'] });
    expect(field('contacts', 'company_id')).toMatchObject({ type: 'reference', reference_target: 'companies' });
    expect(field('deals', 'stage_id')).toMatchObject({ type: 'reference', reference_target: 'stages', required: true });
    expect(field('deals', 'value')).toMatchObject({ type: 'currency' });
    expect(field('deals', 'loss_reason')).toMatchObject({ type: 'string', update_only: true });
    expect(field('deals', 'value_from_line_items')).toMatchObject({ type: 'boolean' });
    expect(field('products', 'sku')).toMatchObject({ type: 'string', unique: true });
    expect(field('products', 'price')).toMatchObject({ type: 'currency' });
    expect(field('pipelines', 'stages')?.items?.type).toBe('object');
    expect(field('pipelines', 'stages')?.items?.fields?.find((f) => f.name === 'type')).toMatchObject({ enum_values: ['open', 'won', 'lost'], required: true });
  });

  it('lists exactly the properties the validators check, with matching type, required flag and enum values', () => {
    for (const builtIn of BUILT_IN_OBJECTS) {
      const listed = object(builtIn.slug).fields.filter((f) => !f.custom);
      const createRules = rulesOf(builtIn.create);
      const updateRules = builtIn.update ? rulesOf(builtIn.update) : new Map<string, Rule[]>();
      const validated = new Set([...createRules.keys(), ...updateRules.keys()]);
      expect({ slug: builtIn.slug, fields: listed.map((f) => f.name).sort() }).toEqual({ slug: builtIn.slug, fields: [...validated].sort() });
      for (const f of listed) {
        const rules = createRules.get(f.name) ?? updateRules.get(f.name)!;
        const where = `${builtIn.slug}.${f.name}`;
        expect({ where, update_only: !!f.update_only }).toEqual({ where, update_only: !createRules.has(f.name) });
        expect({ where, required: !!f.required }).toEqual({ where, required: rules.some((r) => r.name === 'isDefined') });
        const isIn = rules.find((r) => r.name === 'isIn' && !r.each);
        expect({ where, enum_values: f.enum_values }).toEqual({ where, enum_values: isIn ? [...(isIn.constraints[0] as string[])] : undefined });
        expect({ where, type: expectedTypes(rules).includes(f.type) }).toEqual({ where, type: true });
        if (f.type === 'reference') expect({ where, target: typeof f.reference_target }).toEqual({ where, target: 'string' });
      }
    }
  });

  it('tells the truth: each required field missing and each enum field out of its values is rejected by the API', async () => {
    const writable: Record<string, string> = {
      contacts: '/contacts',
      companies: '/companies',
      deals: '/deals',
      pipelines: '/pipelines',
      activities: '/activities',
      tasks: '/tasks',
    };
    for (const [slug, path] of Object.entries(writable)) {
      const fields = object(slug).fields.filter((f) => !f.update_only);
      const missing = await stack.api.post(path, {});
      const required = fields
        .filter((f) => f.required)
        .map((f) => f.name)
        .sort();
      const reported = (missing.body.error?.details ?? [])
        .filter((d: { code: string }) => d.code === 'required')
        .map((d: { field: string }) => d.field)
        .sort();
      expect({ slug, required: reported }).toEqual({ slug, required });
      for (const f of fields.filter((x) => x.type === 'enum')) {
        const res = await stack.api.post(path, { [f.name]: 'definitely-not-allowed' });
        const fieldsReported = (res.body.error?.details ?? []).map((d: { field: string }) => d.field);
        expect({ slug, field: f.name, status: res.status, reported: fieldsReported.includes(f.name) }).toEqual({
          slug,
          field: f.name,
          status: 400,
          reported: true,
        });
      }
      for (const f of fields.filter((x) => x.type === 'email')) {
        const res = await stack.api.post(path, { [f.name]: 'not-an-email' });
        expect({ slug, field: f.name, reported: res.body.error.details.some((d: { field: string }) => d.field === f.name) }).toEqual({
          slug,
          field: f.name,
          reported: true,
        });
      }
    }
  });

  it('shows custom fields and custom objects as they are added', async () => {
    await stack.api.post('/objects/contacts/fields', { name: 'linkedin', label: 'LinkedIn', type: 'url' });
    await stack.api.post('/objects', {
      name: 'Invoice',
      slug: 'invoice',
      enforcement_level: 'soft',
      fields: [
        { name: 'lines', type: 'array', items: { type: 'currency' } },
        { name: 'customer', type: 'reference', reference_target: 'contacts', required: true },
      ],
    });
    const res = await stack.api.get('/schema');
    const contacts = res.body.data.objects.find((o: { slug: string }) => o.slug === 'contacts');
    expect(contacts.fields[contacts.fields.length - 1]).toEqual({ name: 'linkedin', label: 'LinkedIn', type: 'url', custom: true });
    const invoice = res.body.data.objects.find((o: { slug: string }) => o.slug === 'invoice');
    expect(invoice).toMatchObject({ id: expect.stringMatching(/^ot_/), kind: 'custom', status: 'active', enforcement_level: 'soft' });
    expect(invoice.fields).toEqual([
      { name: 'lines', label: 'lines', type: 'array', items: { type: 'currency' } },
      { name: 'customer', label: 'customer', type: 'reference', reference_target: 'contacts', required: true },
    ]);
  });

  it('rejects unknown query parameters and serves read keys', async () => {
    expect((await stack.api.get('/schema?verbose=1')).status).toBe(400);
    const key = (await stack.api.post('/apikeys', { name: 'reader', scope: 'read' })).body.data.key;
    expect((await stack.api.withKey(key).get('/schema')).status).toBe(200);
  });
});
