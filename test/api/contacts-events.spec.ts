import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

interface LoggedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** Every create, update, delete and merge reaches the event log with its payload. */
describe('Contacts service events', () => {
  let stack: TestStack;
  const email = () => `ev.${randomBytes(5).toString('hex')}@example.com`;

  /** Waits until the log holds an event of `type` that `match` accepts. */
  async function logged(type: string, match: (data: Record<string, unknown>) => boolean): Promise<LoggedEvent> {
    return eventually(async () => {
      const events = await stack.api.listAll<LoggedEvent>(`/events?type=${type}`);
      return events.find((e) => e.type === type && match(e.data));
    });
  }

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'events'] });
  });
  afterAll(() => stack.stop());

  it('records contact.created, contact.updated with the changes, and contact.deleted', async () => {
    const contact = (await stack.api.post('/contacts', { email: email(), stage: 'lead' })).body.data;
    // With the record as a query shows it (POST's answer) and its version, for copies kept from an export (docs/exports.md).
    const created = await logged('contact.created', (d) => d.contact_id === contact.id);
    expect(created.data).toEqual({ contact_id: contact.id, email: contact.email, record: contact, version: expect.any(Number) });

    await stack.api.patch(`/contacts/${contact.id}`, { stage: 'customer', first_name: 'Eve', last_name: null });
    const updated = await logged('contact.updated', (d) => d.contact_id === contact.id);
    expect(updated.data).toEqual({
      contact_id: contact.id,
      changed: ['first_name', 'stage'],
      previous: { first_name: null, stage: 'lead' },
      current: { first_name: 'Eve', stage: 'customer' },
      record: { ...contact, first_name: 'Eve', stage: 'customer', updated_at: expect.any(String) },
      version: expect.any(Number),
    });
    expect(updated.data.version).toBeGreaterThan(created.data.version as number);

    await stack.api.delete(`/contacts/${contact.id}`);
    expect((await logged('contact.deleted', (d) => d.contact_id === contact.id)).data).toEqual({ contact_id: contact.id });
  });

  it('records company and task events', async () => {
    const company = (await stack.api.post('/companies', { name: 'Evented' })).body.data;
    expect((await logged('company.created', (d) => d.company_id === company.id)).data).toEqual({ company_id: company.id, name: 'Evented', domain: null });
    await stack.api.patch(`/companies/${company.id}`, { industry: 'Retail' });
    expect((await logged('company.updated', (d) => d.company_id === company.id)).data).toMatchObject({ changed: ['industry'] });
    await stack.api.delete(`/companies/${company.id}`);
    expect((await logged('company.deleted', (d) => d.company_id === company.id)).data).toEqual({ company_id: company.id });

    const task = (await stack.api.post('/tasks', { title: 'evented' })).body.data;
    await stack.api.patch(`/tasks/${task.id}`, { status: 'completed' });
    await stack.api.delete(`/tasks/${task.id}`);
    expect((await logged('task.created', (d) => d.task_id === task.id)).data).toEqual({ task_id: task.id, status: 'pending', contact_id: null, deal_id: null });
    expect((await logged('task.updated', (d) => d.task_id === task.id)).data).toMatchObject({ status: 'completed', changed: ['status'] });
    expect((await logged('task.deleted', (d) => d.task_id === task.id)).data).toMatchObject({ task_id: task.id });
  });

  it('records activity events with the payload deals rely on', async () => {
    const contact = (await stack.api.post('/contacts', { email: email() })).body.data;
    const activity = (await stack.api.post('/activities', { type: 'call', contact_id: contact.id, occurred_at: '2030-02-02T02:02:02Z' })).body.data;
    expect((await logged('activity.created', (d) => d.activity_id === activity.id)).data).toEqual({
      activity_id: activity.id,
      type: 'call',
      contact_id: contact.id,
      deal_id: null,
      occurred_at: '2030-02-02T02:02:02.000Z',
    });
    await stack.api.patch(`/activities/${activity.id}`, { subject: 'Follow-up' });
    expect((await logged('activity.updated', (d) => d.activity_id === activity.id)).data).toMatchObject({ changed: ['subject'] });
    await stack.api.delete(`/activities/${activity.id}`);
    expect((await logged('activity.deleted', (d) => d.activity_id === activity.id)).data).toMatchObject({ activity_id: activity.id, type: 'call' });
  });

  it('emits nothing for a rejected write', async () => {
    const address = email();
    const first = (await stack.api.post('/contacts', { email: address })).body.data;
    expect((await stack.api.post('/contacts', { email: address })).status).toBe(409);
    const marker = (await stack.api.post('/contacts', { email: email() })).body.data;
    // Events are published in commit order: once the later one is logged, a duplicate would be too.
    await logged('contact.created', (d) => d.contact_id === marker.id);
    const created = (await stack.api.listAll<LoggedEvent>('/events?type=contact.created')).filter((e) => e.data.email === address);
    expect(created.map((e) => e.data.contact_id)).toEqual([first.id]);
  });
});
