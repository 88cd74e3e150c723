import { ApiClient, eventually, startStack, TestStack } from '../support';

interface LoggedEvent {
  id: string;
  type: string;
  data: Record<string, any>;
}

describe('POST /capture', () => {
  let stack: TestStack;
  let capture: ApiClient;
  let read: ApiClient;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'events'] });
    const key = async (scope: string) => stack.api.withKey((await stack.api.post('/apikeys', { name: scope, scope })).body.data.key);
    capture = await key('capture-only');
    read = await key('read');
  });
  afterAll(() => stack.stop());

  const eventsFor = async (type: string, contactId: string) =>
    (await stack.api.listAll<LoggedEvent>(`/events?type=${type}`)).filter((e) => e.data.contact_id === contactId);

  it('creates a contact for a new email with a capture-only key and answers 202', async () => {
    const res = await capture.post('/capture', {
      email: '  New.Lead@Example.com ',
      first_name: 'Nia',
      source: 'organic',
      source_detail: 'pricing page form',
      metadata: { utm_campaign: 'spring' },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: { contact_id: expect.stringMatching(/^cont_/), created: true } });
    const contact = await stack.api.get(`/contacts/${res.body.data.contact_id}`);
    expect(contact.body.data).toMatchObject({
      email: 'new.lead@example.com',
      first_name: 'Nia',
      last_name: null,
      source: 'organic',
      source_detail: 'pricing page form',
      metadata: { utm_campaign: 'spring' },
    });
    const created = await eventually(async () => ((await eventsFor('contact.created', res.body.data.contact_id)).length ? true : undefined));
    expect(created).toBe(true);
  });

  it('is idempotent: the same capture again finds the contact and changes nothing', async () => {
    const body = { email: 'repeat@example.com', first_name: 'Ray', metadata: { form: 'demo' } };
    const first = await capture.post('/capture', body);
    const again = await capture.post('/capture', { ...body, email: 'REPEAT@example.com' });
    expect(again.status).toBe(202);
    expect(again.body.data).toEqual({ contact_id: first.body.data.contact_id, created: false });
    // A later, changing capture proves the log is caught up past the idempotent one.
    await capture.post('/capture', { email: 'repeat@example.com', last_name: 'Ode' });
    const updates = await eventually(async () => {
      const found = await eventsFor('contact.updated', first.body.data.contact_id);
      return found.length ? found : undefined;
    });
    expect(updates.map((e) => e.data.changed)).toEqual([['last_name']]);
    expect(await eventsFor('contact.created', first.body.data.contact_id)).toHaveLength(1);
  });

  it('fills only empty fields, never overwrites, and adds only missing metadata keys', async () => {
    const created = await stack.api.post('/contacts', {
      email: 'kept@example.com',
      first_name: 'Kim',
      source: 'referral',
      metadata: { tier: 'gold' },
    });
    const res = await capture.post('/capture', {
      email: 'kept@example.com',
      first_name: 'Someone Else',
      last_name: 'Lee',
      source: 'paid',
      source_detail: 'webinar',
      metadata: { tier: 'bronze', webinar: 'may' },
    });
    expect(res.body.data).toEqual({ contact_id: created.body.data.id, created: false });
    const contact = (await stack.api.get(`/contacts/${created.body.data.id}`)).body.data;
    expect(contact).toMatchObject({
      first_name: 'Kim',
      last_name: 'Lee',
      source: 'referral',
      source_detail: 'webinar',
      metadata: { tier: 'gold', webinar: 'may' },
    });
    const update = await eventually(async () => (await eventsFor('contact.updated', created.body.data.id))[0]);
    expect(update.data.changed.sort()).toEqual(['last_name', 'metadata', 'source_detail']);
  });

  it('creates exactly one contact when many captures of one email race', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => capture.post('/capture', { email: 'race@example.com', first_name: 'Rae' })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect(new Set(results.map((r) => r.body.data.contact_id)).size).toBe(1);
    expect(results.filter((r) => r.body.data.created)).toHaveLength(1);
    const matching = await stack.api.listAll('/contacts?search=race%40example.com');
    expect(matching).toHaveLength(1);
  });

  it('validates the body like contact creation does', async () => {
    const res = await capture.post('/capture', { email: 'not-an-email', source: 'billboard', phone: '+1' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'phone', 'source']);
    expect((await capture.post('/capture', {})).body.error.details).toEqual([{ field: 'email', code: 'required', message: 'email is required' }]);
  });

  it('is allowed to read-write keys and refused to read keys', async () => {
    expect((await stack.api.post('/capture', { email: 'rw@example.com' })).status).toBe(202);
    const refused = await read.post('/capture', { email: 'ro@example.com' });
    expect(refused.status).toBe(403);
    expect((await stack.api.listAll('/contacts?search=ro%40example.com')).length).toBe(0);
    expect((await capture.get('/contacts')).status).toBe(403);
  });
});
