import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

describe('Users (team members)', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  const email = (label = 'member') => `${label}.${randomBytes(5).toString('hex')}@example.com`;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    pipeline = (await stack.api.post('/pipelines', { name: 'Sales', stages: [{ name: 'Open', type: 'open' }] })).body.data;
  });
  afterAll(() => stack.stop());

  it('creates, gets, lists, updates and deletes a user', async () => {
    const address = email('Ada');
    const created = await stack.api.post('/users', { name: '  Ada Lovelace ', email: address.toUpperCase(), role: 'manager' });
    expect(created.status).toBe(201);
    const user = created.body.data;
    expect(user).toEqual({
      id: expect.stringMatching(/^user_[0-9a-z]{26}$/),
      name: 'Ada Lovelace',
      email: address.toLowerCase(),
      role: 'manager',
      external_id: null,
      created_at: expect.any(String),
      updated_at: user.created_at,
    });
    expect((await stack.api.get(`/users/${user.id}`)).body).toEqual({ data: user });
    expect((await stack.api.get(`/users?email=${encodeURIComponent(address.toUpperCase())}`)).body.data).toEqual([user]);

    const plain = (await stack.api.post('/users', { name: 'Bob', email: email() })).body.data;
    expect(plain.role).toBe('member');

    const updated = await stack.api.patch(`/users/${user.id}`, { role: 'admin', name: 'Ada King' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: user.id, name: 'Ada King', role: 'admin', email: user.email });

    expect((await stack.api.delete(`/users/${user.id}`)).status).toBe(204);
    expect((await stack.api.get(`/users/${user.id}`)).status).toBe(404);
    expect((await stack.api.delete(`/users/${user.id}`)).status).toBe(404);
    expect((await stack.api.get('/users/bob')).status).toBe(404);
  });

  it('validates input and keeps emails unique', async () => {
    const bad = await stack.api.post('/users', { email: 'not-an-email', role: 'owner' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'name', 'role']);

    const address = email();
    expect((await stack.api.post('/users', { name: 'First', email: address })).status).toBe(201);
    const dup = await stack.api.post('/users', { name: 'Second', email: address.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body.error.details).toEqual([expect.objectContaining({ field: 'email', code: 'duplicate' })]);
  });

  it('requires owner_id of contacts and deals to name an existing user, and names the owner in relationships', async () => {
    const missing = 'user_01aaaaaaaaaaaaaaaaaaaaaaaa';
    const badContact = await stack.api.post('/contacts', { email: email('c'), owner_id: missing });
    expect(badContact.status).toBe(400);
    expect(badContact.body.error.details).toEqual([expect.objectContaining({ field: 'owner_id', code: 'not_found' })]);
    const badDeal = await stack.api.post('/deals', { name: 'X', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, owner_id: missing });
    expect(badDeal.status).toBe(400);
    expect(badDeal.body.error.details).toEqual([expect.objectContaining({ field: 'owner_id', code: 'not_found' })]);

    const owner = (await stack.api.post('/users', { name: 'Grace Hopper', email: email() })).body.data;
    const contact = (await stack.api.post('/contacts', { email: email('c'), owner_id: owner.id })).body.data;
    const gotContact = await stack.api.get(`/contacts/${contact.id}`);
    expect(gotContact.body.data.relationships.owner).toEqual({ type: 'user', id: owner.id, name: 'Grace Hopper' });
    expect(gotContact.body.included).toContainEqual({ type: 'user', id: owner.id, name: 'Grace Hopper' });

    const deal = await stack.api.post('/deals', { name: 'Owned', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, owner_id: owner.id });
    expect(deal.status).toBe(201);
    const gotDeal = await stack.api.get(`/deals/${deal.body.data.id}`);
    expect(gotDeal.body.data.relationships.owner).toEqual({ type: 'user', id: owner.id, name: 'Grace Hopper' });
    expect(gotDeal.body.included).toContainEqual({ type: 'user', id: owner.id, name: 'Grace Hopper' });

    expect((await stack.api.patch(`/contacts/${contact.id}`, { owner_id: missing })).status).toBe(400);
    expect((await stack.api.patch(`/deals/${deal.body.data.id}`, { owner_id: missing })).status).toBe(400);

    // A deleted owner stays on its records by id, with an empty name.
    expect((await stack.api.delete(`/users/${owner.id}`)).status).toBe(204);
    expect((await stack.api.get(`/contacts/${contact.id}`)).body.data.relationships.owner).toEqual({ type: 'user', id: owner.id, name: '' });
    expect((await stack.api.get(`/deals/${deal.body.data.id}`)).body.data.relationships.owner).toEqual({ type: 'user', id: owner.id, name: '' });
  });

  it('lets an API key belong to a user, whose id stage history records as changed_by', async () => {
    const user = (await stack.api.post('/users', { name: 'Key Holder', email: email() })).body.data;
    const unknown = await stack.api.post('/apikeys', { name: 'x', scope: 'read-write', user_id: 'user_01aaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ field: 'user_id', code: 'not_found' })]);
    expect((await stack.api.post('/apikeys', { name: 'x', scope: 'read-write', user_id: 'bob' })).status).toBe(400);

    const created = await stack.api.post('/apikeys', { name: 'personal', scope: 'read-write', user_id: user.id });
    expect(created.status).toBe(201);
    expect(created.body.data.user_id).toBe(user.id);
    const listed = (await stack.api.get('/apikeys?limit=200')).body.data.find((k: { id: string }) => k.id === created.body.data.id);
    expect(listed.user_id).toBe(user.id);

    const personal = stack.api.withKey(created.body.data.key);
    const two = (
      await stack.api.post('/pipelines', {
        name: 'Two',
        stages: [
          { name: 'A', type: 'open' },
          { name: 'B', type: 'open' },
        ],
      })
    ).body.data;
    const stages: Array<{ id: string }> = two.stages;
    const deal = (await personal.post('/deals', { name: 'Mine', pipeline_id: two.id, stage_id: stages[0].id })).body.data;
    expect((await stack.api.patch(`/deals/${deal.id}`, { stage_id: stages[1].id })).status).toBe(200);
    const history = (await stack.api.get(`/deals/${deal.id}/history`)).body.data;
    expect(history.map((h: { changed_by: string; changed_by_key_id: string }) => [h.changed_by, h.changed_by_key_id])).toEqual([
      [user.id, created.body.data.id],
      ['user_00000000000000000000000000', expect.stringMatching(/^key_/)],
    ]);
  });
});
