import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

describe('Activities', () => {
  let stack: TestStack;
  const newContact = async () => (await stack.api.post('/contacts', { email: `act.${randomBytes(5).toString('hex')}@example.com` })).body.data;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  it('creates, gets, updates and deletes an activity', async () => {
    const contact = await newContact();
    const created = await stack.api.post('/activities', {
      type: 'meeting',
      subject: 'Kick-off',
      body: 'Agenda: scope',
      occurred_at: '2030-04-01T09:30:00Z',
      contact_id: contact.id,
      metadata: { room: 'B' },
    });
    expect(created.status).toBe(201);
    const activity = created.body.data;
    expect(activity).toEqual({
      id: expect.stringMatching(/^act_[0-9a-z]{26}$/),
      type: 'meeting',
      status: 'completed',
      subject: 'Kick-off',
      body: 'Agenda: scope',
      occurred_at: '2030-04-01T09:30:00.000Z',
      contact_id: contact.id,
      deal_id: null,
      metadata: { room: 'B' },
      custom_fields: {},
      created_at: expect.any(String),
      updated_at: activity.created_at,
    });
    expect((await stack.api.get(`/activities/${activity.id}`)).body).toEqual({ data: activity });

    const updated = await stack.api.patch(`/activities/${activity.id}`, { status: 'cancelled', body: null });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ status: 'cancelled', body: null, subject: 'Kick-off', contact_id: contact.id });

    expect((await stack.api.delete(`/activities/${activity.id}`)).status).toBe(204);
    expect((await stack.api.get(`/activities/${activity.id}`)).status).toBe(404);
  });

  it('defaults occurred_at to now and status to completed', async () => {
    const before = Date.now();
    const res = await stack.api.post('/activities', { type: 'note' });
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('completed');
    expect(Date.parse(res.body.data.occurred_at)).toBeGreaterThanOrEqual(before - 2000);
  });

  it('validates type, status, references and sizes', async () => {
    const res = await stack.api.post('/activities', { type: 'fax', status: 'done', contact_id: 'bob', deal_id: 'x', occurred_at: 'soon' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['contact_id', 'deal_id', 'occurred_at', 'status', 'type']);
    expect((await stack.api.post('/activities', {})).body.error.details).toEqual([expect.objectContaining({ field: 'type', code: 'required' })]);
    expect((await stack.api.post('/activities', { type: 'note', subject: 'x'.repeat(501) })).status).toBe(400);
    const unknown = await stack.api.post('/activities', { type: 'call', contact_id: 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'contact_id', code: 'not_found' })]);
    const created = (await stack.api.post('/activities', { type: 'call' })).body.data;
    expect((await stack.api.patch(`/activities/${created.id}`, { type: null })).status).toBe(400);
    expect((await stack.api.patch(`/activities/${created.id}`, { occurred_at: null })).status).toBe(400);
  });

  it('lists with filters and paging', async () => {
    const contact = await newContact();
    const call = (await stack.api.post('/activities', { type: 'call', contact_id: contact.id })).body.data;
    const email = (await stack.api.post('/activities', { type: 'email', status: 'planned', contact_id: contact.id })).body.data;
    expect((await stack.api.listAll(`/activities?contact_id=${contact.id}`)).map((a) => a.id)).toEqual([call.id, email.id]);
    expect((await stack.api.listAll(`/activities?contact_id=${contact.id}&type=email`)).map((a) => a.id)).toEqual([email.id]);
    expect((await stack.api.listAll(`/activities?contact_id=${contact.id}&status=completed`)).map((a) => a.id)).toEqual([call.id]);
    const page = await stack.api.get(`/activities?contact_id=${contact.id}&limit=1`);
    expect(page.body).toEqual({ data: [call], has_more: true, next_cursor: expect.any(String) });
    expect((await stack.api.get('/activities?type=fax')).status).toBe(400);
  });

  it("lists a contact's activities as summaries, 404 for an unknown contact", async () => {
    const contact = await newContact();
    const a = (await stack.api.post('/activities', { type: 'email', subject: 'Hello', body: 'secret', contact_id: contact.id })).body.data;
    const b = (await stack.api.post('/activities', { type: 'meeting', contact_id: contact.id })).body.data;
    const res = await stack.api.get(`/contacts/${contact.id}/activities`);
    expect(res.status).toBe(200);
    const summary = (x: Record<string, unknown>) => ({
      id: x.id,
      type: x.type,
      status: x.status,
      subject: x.subject,
      occurred_at: x.occurred_at,
      created_at: x.created_at,
      updated_at: x.updated_at,
    });
    expect(res.body).toEqual({ data: [summary(a), summary(b)], has_more: false });
    const first = await stack.api.get(`/contacts/${contact.id}/activities?limit=1`);
    expect(first.body).toMatchObject({ data: [summary(a)], has_more: true });
    const second = await stack.api.get(`/contacts/${contact.id}/activities?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({ data: [summary(b)], has_more: false });
    expect((await stack.api.get('/contacts/cont_01aaaaaaaaaaaaaaaaaaaaaaaa/activities')).status).toBe(404);
    expect((await stack.api.get(`/contacts/${contact.id}/activities?limit=0`)).status).toBe(400);
  });

  it("deletes a contact's own activities with the contact", async () => {
    const contact = await newContact();
    const activity = (await stack.api.post('/activities', { type: 'note', contact_id: contact.id })).body.data;
    expect((await stack.api.delete(`/contacts/${contact.id}`)).status).toBe(204);
    expect((await stack.api.get(`/activities/${activity.id}`)).status).toBe(404);
  });

  it('answers 404 for unknown activity ids', async () => {
    expect((await stack.api.get('/activities/act_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    expect((await stack.api.patch('/activities/nope', { subject: 'x' })).status).toBe(404);
    expect((await stack.api.delete('/activities/act_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
  });
});
