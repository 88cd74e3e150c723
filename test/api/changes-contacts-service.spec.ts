import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

type Entry = {
  id: string;
  object: string;
  record_id: string;
  action: string;
  changed: string[];
  previous: any;
  current: any;
  actor: { type: string; id: string | null };
  via: string;
  request_id: string | null;
};
type LoggedEvent = {
  id: string;
  type: string;
  actor?: { type: string; id: string | null };
  via?: string;
  request_id?: string | null;
  data: Record<string, any>;
};

/**
 * Change history of the objects the contacts service keeps besides contacts (changes.spec.ts covers
 * those): companies, activities, tasks, users and custom object records, written one at a time, by
 * batch, by capture, by import, and as side effects of deleting or merging the records they hang on.
 */
describe('change history of companies, work items, users and custom records', () => {
  let stack: TestStack;
  let keyId: string;

  beforeAll(async () => {
    stack = await startStack();
    keyId = (await stack.api.get('/apikeys')).body.data[0].id;
  });
  afterAll(() => stack?.stop());

  const historyOf = async (path: string): Promise<Entry[]> => {
    const res = await stack.api.get(`${path}/changes`);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const last = async (path: string): Promise<Entry> => {
    const entries = await historyOf(path);
    return entries[entries.length - 1];
  };
  /** The events of `type` whose data matches, once the events service has them. */
  const eventsOf = (type: string, matches: (data: Record<string, any>) => boolean, count = 1) =>
    eventually(async () => {
      const found = ((await stack.api.listAll(`/events?type=${type}`)) as LoggedEvent[]).filter((e) => matches(e.data));
      return found.length >= count ? found : undefined;
    });
  const created = async (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await stack.api.post(path, body, { headers });
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const newContact = (extra: Record<string, unknown> = {}) => created('/contacts', { email: `c.${tag()}@example.com`, ...extra });
  const newDeal = async (contactId?: string) => {
    const pipeline = await created('/pipelines', {
      name: `P ${tag()}`,
      stages: [
        { name: 'Open', type: 'open' },
        { name: 'Won', type: 'won' },
      ],
    });
    return created('/deals', {
      name: `D ${tag()}`,
      pipeline_id: pipeline.id,
      stage_id: pipeline.stages[0].id,
      ...(contactId ? { contact_id: contactId } : {}),
    });
  };

  it('records a company created, really updated and deleted; a no-op PATCH records nothing; its contacts each get an entry for losing it', async () => {
    expect((await stack.api.post('/objects/companies/fields', { name: 'tier', type: 'string' })).status).toBeLessThan(300);
    const domain = `co-${tag()}.example`;
    const company = await created('/companies', { name: 'Acme', domain, custom_fields: { tier: 'gold' } }, { 'X-Request-Id': 'req-co-create' });
    expect(
      (
        await stack.api.patch(
          `/companies/${company.id}`,
          { industry: 'Rockets', custom_fields: { tier: 'silver' } },
          { headers: { 'X-Request-Id': 'req-co-patch' } },
        )
      ).status,
    ).toBe(200);
    expect((await stack.api.patch(`/companies/${company.id}`, { name: 'Acme', industry: 'Rockets', custom_fields: { tier: 'silver' } })).status).toBe(200);
    const employee = await newContact({ company_id: company.id });
    expect((await stack.api.delete(`/companies/${company.id}`, { headers: { 'X-Request-Id': 'req-co-delete' } })).status).toBe(204);
    expect((await stack.api.get(`/companies/${company.id}`)).status).toBe(404);

    const log = await historyOf(`/companies/${company.id}`);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated', 'deleted']);
    const [creation, update, deletion] = log;
    expect(creation).toMatchObject({
      object: 'companies',
      record_id: company.id,
      previous: null,
      actor: { type: 'api_key', id: keyId },
      via: 'api',
      request_id: 'req-co-create',
    });
    expect(creation.current).toEqual({ name: 'Acme', domain, 'custom_fields.tier': 'gold' });
    expect([...creation.changed].sort()).toEqual(['custom_fields.tier', 'domain', 'name']);
    expect(update).toMatchObject({
      changed: ['industry', 'custom_fields.tier'],
      previous: { industry: null, 'custom_fields.tier': 'gold' },
      current: { industry: 'Rockets', 'custom_fields.tier': 'silver' },
      request_id: 'req-co-patch',
    });
    expect(deletion).toMatchObject({
      previous: { name: 'Acme', domain, industry: 'Rockets', 'custom_fields.tier': 'silver' },
      current: null,
      via: 'api',
      request_id: 'req-co-delete',
    });
    expect((await stack.api.get(`/companies/${company.id}/changes?field=custom_fields.tier`)).body.data.map((c: Entry) => c.id)).toEqual(log.map((c) => c.id));

    expect(await last(`/contacts/${employee.id}`)).toMatchObject({
      action: 'updated',
      changed: ['company_id'],
      previous: { company_id: company.id },
      current: { company_id: null },
      request_id: 'req-co-delete',
    });
  });

  it('records an activity created, updated and deleted, and activity.updated carries previous and current', async () => {
    const contact = await newContact();
    const activity = await created(
      '/activities',
      { type: 'call', subject: 'Intro', contact_id: contact.id, occurred_at: '2030-01-02T03:04:05.000Z' },
      { 'X-Request-Id': 'req-act-create' },
    );
    expect((await stack.api.patch(`/activities/${activity.id}`, { subject: 'Follow-up', body: 'Notes' })).status).toBe(200);
    expect((await stack.api.patch(`/activities/${activity.id}`, { subject: 'Follow-up', type: 'call' })).status).toBe(200);
    expect((await stack.api.delete(`/activities/${activity.id}`)).status).toBe(204);

    const log = await historyOf(`/activities/${activity.id}`);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated', 'deleted']);
    expect(log[0]).toMatchObject({
      object: 'activities',
      previous: null,
      current: { type: 'call', status: 'completed', subject: 'Intro', occurred_at: '2030-01-02T03:04:05.000Z', contact_id: contact.id },
      actor: { type: 'api_key', id: keyId },
      request_id: 'req-act-create',
    });
    expect(log[1]).toMatchObject({
      changed: ['subject', 'body'],
      previous: { subject: 'Intro', body: null },
      current: { subject: 'Follow-up', body: 'Notes' },
    });
    expect(log[2]).toMatchObject({ previous: { type: 'call', subject: 'Follow-up', body: 'Notes', contact_id: contact.id }, current: null });

    const [event] = await eventsOf('activity.updated', (d) => d.activity_id === activity.id);
    expect(event.data).toEqual({
      activity_id: activity.id,
      type: 'call',
      contact_id: contact.id,
      deal_id: null,
      occurred_at: '2030-01-02T03:04:05.000Z',
      changed: ['subject', 'body'],
      previous: { subject: 'Intro', body: null },
      current: { subject: 'Follow-up', body: 'Notes' },
    });
  });

  it('records a task created, updated and deleted, and task.updated carries previous and current', async () => {
    const task = await created('/tasks', { title: 'Send quote' });
    expect((await stack.api.patch(`/tasks/${task.id}`, { priority: 'high', status: 'completed' })).status).toBe(200);
    expect((await stack.api.patch(`/tasks/${task.id}`, { priority: 'high', title: 'Send quote' })).status).toBe(200);
    expect((await stack.api.delete(`/tasks/${task.id}`)).status).toBe(204);

    const log = await historyOf(`/tasks/${task.id}`);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated', 'deleted']);
    expect(log[0]).toMatchObject({ object: 'tasks', current: { title: 'Send quote', priority: 'medium', status: 'pending' } });
    expect(log[0].changed).not.toContain('completed_at');
    expect(log[1]).toMatchObject({
      changed: ['priority', 'status'],
      previous: { priority: 'medium', status: 'pending' },
      current: { priority: 'high', status: 'completed' },
    });
    expect(log[2]).toMatchObject({ previous: { title: 'Send quote', priority: 'high', status: 'completed', completed_at: expect.any(String) }, current: null });

    const [event] = await eventsOf('task.updated', (d) => d.task_id === task.id);
    expect(event.data).toEqual({
      task_id: task.id,
      status: 'completed',
      contact_id: null,
      deal_id: null,
      changed: ['priority', 'status'],
      previous: { priority: 'medium', status: 'pending' },
      current: { priority: 'high', status: 'completed' },
    });
  });

  it('records the work a deleted contact takes along or lets go, and what the clean-up after a deleted deal does, as the system', async () => {
    const contact = await newContact();
    const deal = await newDeal();
    const own = await created('/activities', { type: 'note', subject: 'Only the contact', contact_id: contact.id });
    const shared = await created('/tasks', { title: 'Shared', contact_id: contact.id, deal_id: deal.id });
    expect((await stack.api.delete(`/contacts/${contact.id}`, { headers: { 'X-Request-Id': 'req-contact-gone' } })).status).toBe(204);

    expect(await last(`/activities/${own.id}`)).toMatchObject({
      action: 'deleted',
      previous: { subject: 'Only the contact', contact_id: contact.id },
      current: null,
      request_id: 'req-contact-gone',
      via: 'api',
    });
    expect(await last(`/tasks/${shared.id}`)).toMatchObject({
      action: 'updated',
      changed: ['contact_id'],
      previous: { contact_id: contact.id },
      current: { contact_id: null },
      request_id: 'req-contact-gone',
    });
    const [unlinked] = await eventsOf('task.updated', (d) => d.task_id === shared.id);
    expect(unlinked.data).toMatchObject({ changed: ['contact_id'], previous: { contact_id: contact.id }, current: { contact_id: null } });

    // The task now hangs on the deal alone, so it goes with the deal; work another contact holds only loses the deal.
    const other = await newContact();
    const kept = await created('/activities', { type: 'meeting', contact_id: other.id, deal_id: deal.id });
    expect((await stack.api.delete(`/deals/${deal.id}`)).status).toBe(204);
    const gone = await eventually(async () => {
      const entry = await last(`/tasks/${shared.id}`);
      return entry.action === 'deleted' ? entry : undefined;
    });
    expect(gone).toMatchObject({
      previous: { title: 'Shared', deal_id: deal.id },
      current: null,
      actor: { type: 'system', id: 'contacts-deal-links' },
      via: 'system',
      request_id: null,
    });
    const detached = await eventually(async () => {
      const entry = await last(`/activities/${kept.id}`);
      return entry.action === 'updated' ? entry : undefined;
    });
    expect(detached).toMatchObject({
      changed: ['deal_id'],
      previous: { deal_id: deal.id },
      current: { deal_id: null },
      actor: { type: 'system', id: 'contacts-deal-links' },
      via: 'system',
    });
  });

  it('records the work a merge moves to the winner, via merge', async () => {
    const winner = await newContact();
    const loser = await newContact();
    const task = await created('/tasks', { title: 'Moves', contact_id: loser.id });
    expect(
      (await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id }, { headers: { 'X-Request-Id': 'req-merge-work' } })).status,
    ).toBe(200);
    expect(await last(`/tasks/${task.id}`)).toMatchObject({
      action: 'updated',
      changed: ['contact_id'],
      previous: { contact_id: loser.id },
      current: { contact_id: winner.id },
      via: 'merge',
      request_id: 'req-merge-work',
    });
    const [moved] = await eventsOf('task.updated', (d) => d.task_id === task.id);
    expect(moved.data).toMatchObject({ changed: ['contact_id'], previous: { contact_id: loser.id }, current: { contact_id: winner.id } });
  });

  it('records a user created, updated and deleted, with no events; a no-op PATCH records nothing', async () => {
    const email = `u.${tag()}@example.com`;
    const user = await created('/users', { name: 'Uma', email }, { 'X-Request-Id': 'req-user-create' });
    expect((await stack.api.patch(`/users/${user.id}`, { role: 'manager' })).status).toBe(200);
    expect((await stack.api.patch(`/users/${user.id}`, { role: 'manager', name: 'Uma' })).status).toBe(200);
    expect((await stack.api.delete(`/users/${user.id}`)).status).toBe(204);
    expect((await stack.api.get(`/users/${user.id}`)).status).toBe(404);

    const log = await historyOf(`/users/${user.id}`);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated', 'deleted']);
    expect(log[0]).toMatchObject({
      object: 'users',
      previous: null,
      current: { name: 'Uma', email, role: 'member' },
      actor: { type: 'api_key', id: keyId },
      via: 'api',
      request_id: 'req-user-create',
    });
    expect(log[1]).toMatchObject({ changed: ['role'], previous: { role: 'member' }, current: { role: 'manager' } });
    expect(log[2]).toMatchObject({ previous: { name: 'Uma', email, role: 'manager' }, current: null });
    expect((await stack.api.get(`/changes?object=users&record_id=${user.id}`)).body.data).toHaveLength(3);
  });

  it('records a custom object record with values.<name> paths, and object_record.updated carries previous and current by value name', async () => {
    const slug = `proj_${tag()}`;
    expect(
      (
        await stack.api.post('/objects', {
          name: `Project ${slug}`,
          slug,
          fields: [
            { name: 'title', type: 'string' },
            { name: 'budget', type: 'number' },
          ],
        })
      ).status,
    ).toBe(201);
    const record = await created(`/objects/${slug}/records`, { values: { title: 'Apollo', budget: 10 } }, { 'X-Request-Id': 'req-rec-create' });
    expect((await stack.api.patch(`/objects/${slug}/records/${record.id}`, { values: { budget: 20, title: null } })).status).toBe(200);
    expect((await stack.api.patch(`/objects/${slug}/records/${record.id}`, { values: { budget: 20 } })).status).toBe(200);
    expect((await stack.api.delete(`/objects/${slug}/records/${record.id}`)).status).toBe(204);

    const path = `/objects/${slug}/records/${record.id}`;
    const log = await historyOf(path);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated', 'deleted']);
    expect(log[0]).toMatchObject({
      object: slug,
      record_id: record.id,
      previous: null,
      current: { 'values.title': 'Apollo', 'values.budget': 10 },
      request_id: 'req-rec-create',
    });
    expect([...log[0].changed].sort()).toEqual(['values.budget', 'values.title']);
    expect(log[1]).toMatchObject({
      changed: ['values.budget', 'values.title'],
      previous: { 'values.budget': 10, 'values.title': 'Apollo' },
      current: { 'values.budget': 20, 'values.title': null },
    });
    expect(log[2]).toMatchObject({ changed: ['values.budget'], previous: { 'values.budget': 20 }, current: null });
    expect((await stack.api.get(`${path}/changes?field=values.title`)).body.data.map((c: Entry) => c.id)).toEqual([log[0].id, log[1].id]);
    expect((await stack.api.get(`/changes?object=${slug}`)).body.data).toHaveLength(3);

    const [event] = await eventsOf('object_record.updated', (d) => d.record_id === record.id);
    expect(event.data).toMatchObject({
      object: slug,
      changed: ['budget', 'title'],
      previous: { budget: 10, title: 'Apollo' },
      current: { budget: 20, title: null },
    });
  });

  it('records every applied batch item via batch: creates, upserts, deletes and what they unlink; failed items and no-ops record nothing', async () => {
    const [d1, d2, d3] = [tag(), tag(), tag()].map((t) => `b-${t}.example`);
    const made = await stack.api.post(
      '/companies/batch',
      { operation: 'create', items: [{ name: 'B1', domain: d1 }, { name: 'B2', domain: d2 }, { domain: 'nameless.example' }] },
      { headers: { 'X-Request-Id': 'req-batch-create' } },
    );
    expect(made.status).toBe(200);
    expect(made.body.data.map((r: any) => r.status)).toEqual([201, 201, 400]);
    const [b1, b2] = made.body.data.map((r: any) => r.data?.id);
    expect(await historyOf(`/companies/${b1}`)).toEqual([
      expect.objectContaining({
        action: 'created',
        current: { name: 'B1', domain: d1 },
        via: 'batch',
        actor: { type: 'api_key', id: keyId },
        request_id: 'req-batch-create',
      }),
    ]);

    const upserted = await stack.api.post('/companies/batch', {
      operation: 'upsert',
      items: [
        { name: 'B1 renamed', domain: d1 },
        { name: 'B2', domain: d2 },
        { name: 'B3', domain: d3 },
      ],
    });
    expect(upserted.body.data.map((r: any) => r.status)).toEqual([200, 200, 201]);
    expect((await historyOf(`/companies/${b1}`)).map((c) => [c.action, c.via, c.changed])).toEqual([
      ['created', 'batch', expect.any(Array)],
      ['updated', 'batch', ['name']],
    ]);
    expect((await historyOf(`/companies/${b2}`)).map((c) => c.action)).toEqual(['created']);
    expect(await historyOf(`/companies/${upserted.body.data[2].data.id}`)).toEqual([expect.objectContaining({ action: 'created', via: 'batch' })]);

    const employee = await newContact({ company_id: b2 });
    const removed = await stack.api.post('/companies/batch', { operation: 'delete', items: [{ id: b2 }] }, { headers: { 'X-Request-Id': 'req-batch-delete' } });
    expect(removed.body.data[0].status).toBe(204);
    expect(await last(`/companies/${b2}`)).toMatchObject({
      action: 'deleted',
      previous: { name: 'B2', domain: d2 },
      via: 'batch',
      request_id: 'req-batch-delete',
    });
    expect(await last(`/contacts/${employee.id}`)).toMatchObject({
      action: 'updated',
      changed: ['company_id'],
      previous: { company_id: b2 },
      current: { company_id: null },
      via: 'batch',
    });

    const task = await created('/tasks', { title: 'Batch me' });
    expect((await stack.api.post('/tasks/batch', { operation: 'update', items: [{ id: task.id, status: 'cancelled' }] })).body.data[0].status).toBe(200);
    expect(await last(`/tasks/${task.id}`)).toMatchObject({
      action: 'updated',
      changed: ['status'],
      previous: { status: 'pending' },
      current: { status: 'cancelled' },
      via: 'batch',
    });
    const [batchEvent] = await eventsOf('task.updated', (d) => d.task_id === task.id);
    expect(batchEvent).toMatchObject({ via: 'batch', data: { changed: ['status'], previous: { status: 'pending' }, current: { status: 'cancelled' } } });

    const slug = `batch_${tag()}`;
    expect(
      (
        await stack.api.post('/objects', {
          name: `Batch ${slug}`,
          slug,
          fields: [
            { name: 'code', type: 'string', unique: true },
            { name: 'title', type: 'string' },
          ],
        })
      ).status,
    ).toBe(201);
    const records = await stack.api.post(`/objects/${slug}/records/batch`, { operation: 'create', items: [{ values: { code: 'A', title: 'Alpha' } }] });
    const recordId = records.body.data[0].data.id;
    await stack.api.post(`/objects/${slug}/records/batch`, { operation: 'upsert', key: 'code', items: [{ values: { code: 'A', title: 'Alpha 2' } }] });
    await stack.api.post(`/objects/${slug}/records/batch`, { operation: 'delete', items: [{ id: recordId }] });
    expect((await historyOf(`/objects/${slug}/records/${recordId}`)).map((c) => [c.action, c.via, c.changed])).toEqual([
      ['created', 'batch', expect.arrayContaining(['values.code', 'values.title'])],
      ['updated', 'batch', ['values.title']],
      ['deleted', 'batch', expect.arrayContaining(['values.code', 'values.title'])],
    ]);
  });

  it('records captures via capture, under the capture key', async () => {
    const key = (await stack.api.post('/apikeys', { name: `capture-${tag()}`, scope: 'capture-only' })).body.data;
    const capture = stack.api.withKey(key.key);
    const email = `lead.${tag()}@example.com`;
    const first = await capture.post('/capture', { email, first_name: 'Nia', source: 'organic' }, { headers: { 'X-Request-Id': 'req-capture-1' } });
    expect(first.status).toBe(202);
    const contactId = first.body.data.contact_id;
    await capture.post('/capture', { email, first_name: 'Other', last_name: 'Ode' });
    await capture.post('/capture', { email, last_name: 'Ode' });

    const log = await historyOf(`/contacts/${contactId}`);
    expect(log.map((c) => c.action)).toEqual(['created', 'updated']);
    expect(log[0]).toMatchObject({
      action: 'created',
      current: { email, first_name: 'Nia', source: 'organic' },
      actor: { type: 'api_key', id: key.id },
      via: 'capture',
      request_id: 'req-capture-1',
    });
    expect(log[1]).toMatchObject({
      changed: ['last_name'],
      previous: { last_name: null },
      current: { last_name: 'Ode' },
      via: 'capture',
      actor: { type: 'api_key', id: key.id },
    });
  });

  it('records imported rows via import, with the importing key as actor and the upload request id', async () => {
    const importer = (await stack.api.post('/apikeys', { name: `importer-${tag()}`, scope: 'read-write' })).body.data;
    const known = `known-${tag()}.example`;
    const fresh = `fresh-${tag()}.example`;
    const existing = await created('/companies', { name: 'Known', domain: known });
    const csv = ['name,domain', `Fresh,${fresh}`, `Known renamed,${known}`].join('\n');
    const res = await fetch(`${stack.gateway.url}/imports?object=companies`, {
      method: 'POST',
      headers: { 'X-Api-Key': importer.key, 'Content-Type': 'text/csv', 'X-Request-Id': 'req-import-1' },
      body: csv,
    });
    expect(res.status).toBe(202);
    const job = ((await res.json()) as any).data;
    const done = await eventually(async () => {
      const current = (await stack.api.get(`/imports/${job.id}`)).body.data;
      return ['completed', 'failed'].includes(current.status) ? current : undefined;
    }, 120_000);
    expect(done).toMatchObject({ status: 'completed', counts: { created: 1, updated: 1, failed: 0 } });

    const origin = { actor: { type: 'api_key', id: importer.id }, via: 'import', request_id: 'req-import-1' };
    const [freshCompany] = (await stack.api.get(`/companies?domain=${fresh}`)).body.data;
    expect(await historyOf(`/companies/${freshCompany.id}`)).toEqual([
      expect.objectContaining({ action: 'created', current: { name: 'Fresh', domain: fresh }, ...origin }),
    ]);
    expect(await last(`/companies/${existing.id}`)).toMatchObject({
      action: 'updated',
      changed: ['name'],
      previous: { name: 'Known' },
      current: { name: 'Known renamed' },
      ...origin,
    });
    const [event] = await eventsOf('company.created', (d) => d.company_id === freshCompany.id);
    expect(event).toMatchObject(origin);
    expect((await stack.api.get(`/changes?via=import&actor_id=${importer.id}`)).body.data).toHaveLength(2);
  });
});
