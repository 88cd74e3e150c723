import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

describe('Tasks', () => {
  let stack: TestStack;
  const newContact = async () => (await stack.api.post('/contacts', { email: `task.${randomBytes(5).toString('hex')}@example.com` })).body.data;
  const OWNER = 'user_01cccccccccccccccccccccccc';

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  it('creates, gets, updates and deletes a task', async () => {
    const contact = await newContact();
    const created = await stack.api.post('/tasks', {
      title: ' Send proposal ',
      description: 'v2 pricing',
      priority: 'high',
      due_at: '2030-06-01T12:00:00Z',
      contact_id: contact.id,
      owner_id: OWNER,
    });
    expect(created.status).toBe(201);
    const task = created.body.data;
    expect(task).toEqual({
      id: expect.stringMatching(/^task_[0-9a-z]{26}$/),
      title: 'Send proposal',
      description: 'v2 pricing',
      priority: 'high',
      status: 'pending',
      due_at: '2030-06-01T12:00:00.000Z',
      completed_at: null,
      contact_id: contact.id,
      deal_id: null,
      owner_id: OWNER,
      metadata: {},
      custom_fields: {},
      created_at: expect.any(String),
      updated_at: task.created_at,
    });
    expect((await stack.api.get(`/tasks/${task.id}`)).body).toEqual({ data: task });

    const done = await stack.api.patch(`/tasks/${task.id}`, { status: 'completed', due_at: null });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'completed', due_at: null, title: 'Send proposal', priority: 'high' });
    expect(Date.parse(done.body.data.completed_at)).toBeGreaterThanOrEqual(Date.parse(task.created_at));
    const reopened = await stack.api.patch(`/tasks/${task.id}`, { status: 'pending' });
    expect(reopened.body.data.completed_at).toBeNull();

    expect((await stack.api.delete(`/tasks/${task.id}`)).status).toBe(204);
    expect((await stack.api.get(`/tasks/${task.id}`)).status).toBe(404);
  });

  it('defaults priority to medium and status to pending', async () => {
    const res = await stack.api.post('/tasks', { title: 'Call back' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ priority: 'medium', status: 'pending', due_at: null, contact_id: null });
  });

  it('validates the body', async () => {
    const res = await stack.api.post('/tasks', { priority: 'urgent', status: 'open', owner_id: 'bob', due_at: 'tomorrow' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['due_at', 'owner_id', 'priority', 'status', 'title']);
    expect((await stack.api.post('/tasks', { title: '   ' })).status).toBe(400);
    const unknown = await stack.api.post('/tasks', { title: 'x', contact_id: 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'contact_id', code: 'not_found' })]);
    const created = (await stack.api.post('/tasks', { title: 'keep' })).body.data;
    expect((await stack.api.patch(`/tasks/${created.id}`, { title: null })).status).toBe(400);
    expect((await stack.api.patch(`/tasks/${created.id}`, { priority: null })).status).toBe(400);
  });

  it('lists with filters and paging', async () => {
    const contact = await newContact();
    const a = (await stack.api.post('/tasks', { title: 'a', priority: 'low', contact_id: contact.id, owner_id: OWNER })).body.data;
    const b = (await stack.api.post('/tasks', { title: 'b', status: 'completed', contact_id: contact.id })).body.data;
    const list = async (q: string) => (await stack.api.listAll(`/tasks?contact_id=${contact.id}${q}`)).map((t) => t.id);
    expect(await list('')).toEqual([a.id, b.id]);
    expect(await list('&status=completed')).toEqual([b.id]);
    expect(await list('&priority=low')).toEqual([a.id]);
    expect(await list(`&owner_id=${OWNER}`)).toEqual([a.id]);
    expect(b.completed_at).toBe(b.created_at);
    expect((await stack.api.get('/tasks?priority=urgent')).status).toBe(400);
  });

  it("lists a contact's tasks as summaries, 404 for an unknown contact", async () => {
    const contact = await newContact();
    const t = (await stack.api.post('/tasks', { title: 'Follow up', priority: 'high', contact_id: contact.id, due_at: '2030-01-01T00:00:00Z' })).body.data;
    const res = await stack.api.get(`/contacts/${contact.id}/tasks`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: t.id,
          title: 'Follow up',
          priority: 'high',
          status: 'pending',
          due_at: '2030-01-01T00:00:00.000Z',
          created_at: t.created_at,
          updated_at: t.updated_at,
        },
      ],
      has_more: false,
    });
    expect((await stack.api.get('/contacts/cont_01aaaaaaaaaaaaaaaaaaaaaaaa/tasks')).status).toBe(404);
  });

  it("deletes a contact's own tasks with the contact", async () => {
    const contact = await newContact();
    const task = (await stack.api.post('/tasks', { title: 'gone', contact_id: contact.id })).body.data;
    expect((await stack.api.delete(`/contacts/${contact.id}`)).status).toBe(204);
    expect((await stack.api.get(`/tasks/${task.id}`)).status).toBe(404);
  });

  it('answers 404 for unknown task ids', async () => {
    expect((await stack.api.get('/tasks/task_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
    expect((await stack.api.patch('/tasks/nope', { title: 'x' })).status).toBe(404);
    expect((await stack.api.delete('/tasks/task_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
  });
});
