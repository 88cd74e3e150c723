import { eventually, startStack, TestStack } from '../support';

/**
 * Custom fields beyond contacts and companies: on activities and tasks, on deals and pipelines (kept by the
 * deals service), an enforcement level for each built-in object's custom fields, and renaming and removing
 * fields with what that does to stored values.
 */
describe('Custom fields on every built-in object', () => {
  let stack: TestStack;
  let counter = 0;
  const unique = (base: string) => `${base}_${++counter}`;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
  });
  afterAll(() => stack.stop());

  const ok = async (method: 'post' | 'patch' | 'delete', path: string, body?: unknown, status = method === 'post' ? 201 : 200) => {
    const res = method === 'delete' ? await stack.api.delete(path) : await stack.api[method](path, body);
    if (res.status !== status) throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}: ${res.text}`);
    return res.body;
  };

  describe('activities and tasks', () => {
    it('define custom fields through /objects, validate them on write, return and merge them, and show them in /schema', async () => {
      await ok('post', '/objects/activities/fields', { name: 'sentiment', type: 'enum', enum_values: ['positive', 'negative'] });
      await ok('post', '/objects/tasks/fields', { name: 'estimate_hours', type: 'number', required: true });

      const badActivity = await stack.api.post('/activities', { type: 'call', custom_fields: { sentiment: 'meh' } });
      expect(badActivity.status).toBe(400);
      expect(badActivity.body.error.details).toEqual([
        { field: 'custom_fields.sentiment', code: 'invalid_value', message: 'custom_fields.sentiment must be one of positive, negative' },
      ]);
      const activity = (await ok('post', '/activities', { type: 'call', custom_fields: { sentiment: 'positive' } })).data;
      expect(activity.custom_fields).toEqual({ sentiment: 'positive' });
      expect((await stack.api.get(`/activities/${activity.id}`)).body.data.custom_fields).toEqual({ sentiment: 'positive' });

      const missing = await stack.api.post('/tasks', { title: 'No estimate' });
      expect(missing.body.error.details).toEqual([
        { field: 'custom_fields.estimate_hours', code: 'required', message: 'custom_fields.estimate_hours is required' },
      ]);
      const task = (await ok('post', '/tasks', { title: 'Estimated', custom_fields: { estimate_hours: 3 } })).data;
      const renamed = (await ok('patch', `/tasks/${task.id}`, { title: 'Estimated again' })).data;
      expect(renamed.custom_fields).toEqual({ estimate_hours: 3 });
      const cleared = await stack.api.patch(`/tasks/${task.id}`, { custom_fields: { estimate_hours: null } });
      expect(cleared.status).toBe(400); // still required
      expect((await ok('patch', `/tasks/${task.id}`, { custom_fields: { estimate_hours: 5 } })).data.custom_fields).toEqual({ estimate_hours: 5 });

      const schema = (await stack.api.get('/schema')).body.data.objects as Array<{
        slug: string;
        accepts_custom_fields: boolean;
        fields: Array<{ name: string }>;
      }>;
      for (const slug of ['contacts', 'companies', 'activities', 'tasks'])
        expect({ slug, accepts: schema.find((o) => o.slug === slug)!.accepts_custom_fields }).toEqual({ slug, accepts: true });
      expect(schema.find((o) => o.slug === 'tasks')!.fields).toContainEqual({
        name: 'estimate_hours',
        label: 'estimate_hours',
        type: 'number',
        required: true,
        custom: true,
      });
    });
  });

  describe('deals and pipelines (the deals service)', () => {
    it('define, check, return, rename and remove custom fields, shown in /schema beside the others', async () => {
      const contact = (await ok('post', '/contacts', { email: 'deal-ref@example.com' })).data;
      const pipeline = (
        await ok('post', '/pipelines', {
          name: 'Custom',
          stages: [
            { name: 'Open', type: 'open' },
            { name: 'Won', type: 'won' },
          ],
        })
      ).data;
      const added = await ok('post', '/objects/deals/fields', { name: 'champion', type: 'reference', reference_target: 'contacts' });
      expect(added.data).toMatchObject({ slug: 'deals', kind: 'built_in', enforcement_level: 'hard', accepts_custom_fields: true });
      await ok('post', '/objects/deals/fields', { name: 'po_number', type: 'string', unique: true });
      await ok('post', '/objects/pipelines/fields', { name: 'region', type: 'enum', enum_values: ['emea', 'amer'], required: true });
      // Only records the deals service can check: deals, contacts, companies.
      const unchecked = await stack.api.post('/objects/deals/fields', { name: 'call', type: 'reference', reference_target: 'activities' });
      expect(unchecked.body.error.details).toEqual([expect.objectContaining({ field: 'field.reference_target', code: 'not_found' })]);

      const base = { pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id };
      const bad = await stack.api.post('/deals', { ...base, name: 'Bad', custom_fields: { champion: 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa', po_number: 7 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
        'custom_fields.champion:not_found',
        'custom_fields.po_number:invalid_type',
      ]);
      const deal = (await ok('post', '/deals', { ...base, name: 'Good', custom_fields: { champion: contact.id, po_number: 'PO-1' } })).data;
      expect(deal.custom_fields).toEqual({ champion: contact.id, po_number: 'PO-1' });
      const dup = await stack.api.post('/deals', { ...base, name: 'Dup', custom_fields: { po_number: 'PO-1' } });
      expect(dup.body.error.details).toEqual([expect.objectContaining({ field: 'custom_fields.po_number', code: 'duplicate' })]);
      const patched = await ok('patch', `/deals/${deal.id}`, { custom_fields: { champion: null } });
      expect(patched.data.custom_fields).toEqual({ po_number: 'PO-1' });

      expect((await stack.api.patch(`/pipelines/${pipeline.id}`, { custom_fields: { region: 'apac' } })).status).toBe(400);
      expect((await ok('patch', `/pipelines/${pipeline.id}`, { custom_fields: { region: 'emea' } })).data.custom_fields).toEqual({ region: 'emea' });
      expect((await stack.api.post('/pipelines', { name: 'No region' })).body.error.details).toEqual([
        expect.objectContaining({ field: 'custom_fields.region', code: 'required' }),
      ]);

      const soft = await ok('patch', '/objects/deals', { enforcement_level: 'soft' });
      expect(soft.data.enforcement_level).toBe('soft');
      const warned = await ok('post', '/deals', { ...base, name: 'Warned', custom_fields: { po_number: 42 } });
      expect(warned.warnings).toEqual([{ field: 'custom_fields.po_number', code: 'invalid_type', message: 'custom_fields.po_number must be a string' }]);
      await ok('patch', '/objects/deals', { enforcement_level: 'hard' });

      await ok('patch', '/objects/deals/fields/po_number', { name: 'purchase_order' });
      expect((await stack.api.get(`/deals/${deal.id}`)).body.data.custom_fields).toEqual({ purchase_order: 'PO-1' });
      await ok('delete', '/objects/pipelines/fields/region');
      expect((await stack.api.get(`/pipelines/${pipeline.id}`)).body.data.custom_fields).toEqual({});

      const schema = (await stack.api.get('/schema')).body.data.objects as Array<{ slug: string; fields: Array<{ name: string; custom?: boolean }> }>;
      expect(
        schema
          .find((o) => o.slug === 'deals')!
          .fields.filter((f) => f.custom)
          .map((f) => f.name),
      ).toEqual(['champion', 'purchase_order']);
      expect(schema.find((o) => o.slug === 'pipelines')!.fields.filter((f) => f.custom)).toEqual([]);
      expect(
        (await stack.api.get('/objects/deals')).body.data.fields.filter((f: { custom?: boolean }) => f.custom).map((f: { name: string }) => f.name),
      ).toEqual(['champion', 'purchase_order']);
    });

    it('answers /schema with 503 while the deals service, which keeps the deal fields, is away', async () => {
      await stack.stopService('deals');
      try {
        const res = await stack.api.get('/schema');
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('service_unavailable');
      } finally {
        await stack.startService('deals');
      }
      expect((await stack.api.get('/schema')).status).toBe(200);
    });
  });

  describe('enforcement levels of built-in objects', () => {
    it('start hard, and only the enforcement level of a built-in object can change', async () => {
      expect((await stack.api.get('/objects/companies')).body.data.enforcement_level).toBe('hard');
      const renamed = await stack.api.patch('/objects/companies', { name: 'Firms' });
      expect(renamed.status).toBe(400);
      expect(renamed.body.error.message).toMatch(/'companies' is a built-in object: its name cannot change, only its enforcement_level/);
      expect((await stack.api.patch('/objects/companies', { enforcement_level: 'lenient' })).status).toBe(400);
      // Objects without custom fields say so.
      expect((await stack.api.patch('/objects/stages', { enforcement_level: 'soft' })).body.error.message).toMatch(/does not accept them/);
    });

    it('soft: writes that break a definition are stored and answered with warnings in the custom-object shape', async () => {
      await ok('post', '/objects/companies/fields', { name: 'employees', type: 'number' });
      const soft = await ok('patch', '/objects/companies', { enforcement_level: 'soft' });
      expect(soft.data).toMatchObject({ slug: 'companies', kind: 'built_in', enforcement_level: 'soft' });
      expect((await stack.api.get('/schema')).body.data.objects.find((o: { slug: string }) => o.slug === 'companies').enforcement_level).toBe('soft');

      const created = await ok('post', '/companies', { name: 'Softco', custom_fields: { employees: 'many', extra: true } });
      expect(created.data.custom_fields).toEqual({ employees: 'many', extra: true });
      expect(created.warnings).toEqual([
        { field: 'custom_fields.extra', code: 'unknown_field', message: "unknown field 'custom_fields.extra'" },
        { field: 'custom_fields.employees', code: 'invalid_type', message: 'custom_fields.employees must be a number' },
      ]);
      const updated = await ok('patch', `/companies/${created.data.id}`, { custom_fields: { employees: 12 } });
      expect(updated.warnings).toBeUndefined();
      const again = await ok('patch', `/companies/${created.data.id}`, { custom_fields: { employees: 'twelve' } });
      expect(again.warnings).toEqual([expect.objectContaining({ field: 'custom_fields.employees', code: 'invalid_type' })]);
      // Built-in fields stay hard whatever the level.
      expect((await stack.api.post('/companies', { name: '' })).status).toBe(400);

      await ok('patch', '/objects/companies', { enforcement_level: 'none' });
      const unchecked = await ok('post', '/companies', { name: 'Noneco', custom_fields: { employees: 'lots' } });
      expect(unchecked.warnings).toBeUndefined();
      expect(unchecked.data.custom_fields).toEqual({ employees: 'lots' });

      await ok('patch', '/objects/companies', { enforcement_level: 'hard' });
      expect((await stack.api.post('/companies', { name: 'Hardco', custom_fields: { employees: 'lots' } })).status).toBe(400);

      const events = await eventually(async () => {
        const page = (await stack.api.get('/events?type=object_type.updated&limit=200')).body.data as Array<{ data: { slug: string; changed: string[] } }>;
        const levels = page.filter((e) => e.data.slug === 'companies' && e.data.changed.includes('enforcement_level'));
        return levels.length === 3 ? levels : undefined;
      });
      expect(events).toHaveLength(3);
    });
  });

  describe('renaming and removing fields', () => {
    it('renames a custom object field, moving every stored value, and changes labels', async () => {
      const slug = unique('ticket');
      await ok('post', '/objects', {
        name: 'Ticket',
        slug,
        fields: [
          { name: 'sev', type: 'enum', enum_values: ['low', 'high'], required: true },
          { name: 'note', type: 'string' },
        ],
      });
      const records = await Promise.all(
        ['low', 'high'].map(async (sev) => (await ok('post', `/objects/${slug}/records`, { values: { sev, note: sev } })).data),
      );

      const renamed = await ok('patch', `/objects/${slug}/fields/sev`, { name: 'severity', label: 'Severity' });
      expect(renamed.data.fields.map((f: { name: string; label: string }) => [f.name, f.label])).toEqual([
        ['severity', 'Severity'],
        ['note', 'note'],
      ]);
      for (const r of records) {
        const got = (await stack.api.get(`/objects/${slug}/records/${r.id}`)).body.data;
        expect(got.values).toEqual({ severity: r.values.sev, note: r.values.note });
        expect(got.updated_at).toBe(r.updated_at);
      }
      // The rules came along: the renamed field is still a required enum; the old name is unknown.
      expect((await stack.api.post(`/objects/${slug}/records`, { values: { note: 'x' } })).body.error.details).toEqual([
        expect.objectContaining({ field: 'values.severity', code: 'required' }),
      ]);
      expect((await stack.api.post(`/objects/${slug}/records`, { values: { sev: 'low', severity: 'low' } })).body.error.details).toEqual([
        expect.objectContaining({ field: 'values.sev', code: 'unknown_field' }),
      ]);

      expect((await stack.api.patch(`/objects/${slug}/fields/note`, { label: 'Notes' })).body.data.fields[1]).toMatchObject({ name: 'note', label: 'Notes' });
      expect((await stack.api.patch(`/objects/${slug}/fields/note`, { name: 'severity' })).status).toBe(409);
      expect((await stack.api.patch(`/objects/${slug}/fields/nope`, { name: 'other' })).status).toBe(404);
      const retyped = await stack.api.patch(`/objects/${slug}/fields/note`, { type: 'number' });
      expect(retyped.status).toBe(400);
      expect(retyped.body.error.details).toEqual([expect.objectContaining({ field: 'type' })]);
      expect((await stack.api.patch(`/objects/${slug}/fields/note`, { name: 'Bad Name' })).status).toBe(400);
    });

    it('renames and removes custom fields of contacts, with their values, and removal frees a unique value', async () => {
      await ok('post', '/objects/contacts/fields', { name: 'badge', type: 'string', unique: true });
      const first = (await ok('post', '/contacts', { email: 'badge1@example.com', custom_fields: { badge: 'B-1' } })).data;

      await ok('patch', '/objects/contacts/fields/badge', { name: 'badge_code' });
      expect((await stack.api.get(`/contacts/${first.id}`)).body.data.custom_fields).toEqual({ badge_code: 'B-1' });
      // Uniqueness follows the field to its new name.
      const taken = await stack.api.post('/contacts', { email: 'badge2@example.com', custom_fields: { badge_code: 'B-1' } });
      expect(taken.body.error.details).toEqual([expect.objectContaining({ field: 'custom_fields.badge_code', code: 'duplicate' })]);
      // A built-in field's name cannot be taken.
      expect((await stack.api.patch('/objects/contacts/fields/badge_code', { name: 'email' })).status).toBe(409);

      const removed = await ok('delete', '/objects/contacts/fields/badge_code');
      expect(removed.data.fields.map((f: { name: string }) => f.name)).not.toContain('badge_code');
      expect((await stack.api.get(`/contacts/${first.id}`)).body.data.custom_fields).toEqual({});
      expect((await stack.api.delete('/objects/contacts/fields/badge_code')).status).toBe(404);
      // Hard enforcement now refuses the old name as unknown.
      expect((await stack.api.post('/contacts', { email: 'badge3@example.com', custom_fields: { badge_code: 'B-1' } })).status).toBe(400);
      const schema = (await stack.api.get('/schema')).body.data.objects.find((o: { slug: string }) => o.slug === 'contacts');
      expect(schema.fields.map((f: { name: string }) => f.name)).not.toContain('badge_code');
    });

    it('never strands a value under the old name while contacts are written during a rename', async () => {
      await ok('post', '/objects/contacts/fields', { name: 'region', type: 'string' });
      const written: string[] = [];
      let running = true;
      const writer = async (w: number) => {
        for (let n = 0; running; n++) {
          const res = await stack.api.post('/contacts', { email: `race${w}-${n}@example.com`, custom_fields: { region: 'emea' } });
          // Before the rename: stored (and moved); after it: 'region' is unknown under hard enforcement.
          expect([201, 400]).toContain(res.status);
          if (res.status === 201) written.push(res.body.data.id);
        }
      };
      const writers = [0, 1, 2, 3].map(writer);
      await eventually(async () => (written.length >= 5 ? true : undefined));
      await ok('patch', '/objects/contacts/fields/region', { name: 'territory' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      running = false;
      await Promise.all(writers);

      const stored: Array<Record<string, unknown>> = [];
      for (let i = 0; i < written.length; i += 20) {
        const batch = await Promise.all(written.slice(i, i + 20).map(async (id) => (await stack.api.get(`/contacts/${id}`)).body.data.custom_fields));
        stored.push(...batch);
      }
      expect(stored.filter((values) => 'region' in values)).toEqual([]);
      expect(stored.every((values) => values.territory === 'emea')).toBe(true);
    });
  });
});
