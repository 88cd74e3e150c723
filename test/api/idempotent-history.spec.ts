import { randomBytes } from 'crypto';
import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');
const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

interface Entry {
  object: string;
  record_id: string;
  action: string;
  changed: string[];
  current: Record<string, unknown> | null;
}

/** A retried request with the same Idempotency-Key is applied once, so it records one history entry (docs/changes.md). */
describe('History of retried requests', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
  });
  afterAll(() => stack.stop());

  /** A key of its own, so its entries are exactly those of the requests a test sends with it. */
  async function freshActor(): Promise<{ client: ApiClient; id: string }> {
    const res = await stack.api.post('/apikeys', { name: `history ${tag()}`, scope: 'read-write' });
    expect(res.status).toBe(201);
    return { client: stack.api.withKey(res.body.data.key), id: res.body.data.id };
  }
  const entriesOf = (actorId: string) => stack.api.listAll<Entry>(`/changes?actor_id=${actorId}`);

  it('records one created entry for a create sent again, at once and later', async () => {
    const { client, id } = await freshActor();
    const key = `create-${tag()}`;
    const body = { title: `Call back ${tag()}` };
    // Retries racing the first attempt are told it is in progress; those after it get its answer again.
    const racing = await Promise.all(Array.from({ length: 5 }, () => client.post('/tasks', body, withKey(key))));
    expect(racing.filter((r) => r.status === 201)).not.toHaveLength(0);
    expect(racing.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const later = await client.post('/tasks', body, withKey(key));
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBe('true');

    const entries = await entriesOf(id);
    expect(entries.map((e) => [e.object, e.record_id, e.action])).toEqual([['tasks', later.body.data.id, 'created']]);
  });

  it('records one entry for an update retried after another change, which the retry does not undo', async () => {
    const { client, id } = await freshActor();
    const contact = await client.post('/contacts', { email: `retried-${tag()}@history.example` });
    expect(contact.status).toBe(201);
    const path = `/contacts/${contact.body.data.id}`;
    const key = `update-${tag()}`;
    expect((await client.patch(path, { title: 'CTO' }, withKey(key))).status).toBe(200);
    expect((await client.patch(path, { title: 'CEO' })).status).toBe(200);
    const retry = await client.patch(path, { title: 'CTO' }, withKey(key));
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');

    expect((await client.get(path)).body.data.title).toBe('CEO');
    const entries = await entriesOf(id);
    expect(entries.map((e) => [e.action, e.current])).toEqual([
      ['created', expect.anything()],
      ['updated', { title: 'CTO' }],
      ['updated', { title: 'CEO' }],
    ]);
  });

  it('records one entry per item for a batch sent again', async () => {
    const { client, id } = await freshActor();
    const key = `batch-${tag()}`;
    const items = [0, 1, 2].map((i) => ({ title: `Batch task ${i}` }));
    const first = await client.post('/tasks/batch', { operation: 'create', items }, withKey(key));
    expect(first.status).toBe(200);
    const again = await client.post('/tasks/batch', { operation: 'create', items }, withKey(key));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const entries = await entriesOf(id);
    const created = first.body.data.map((r: { data: { id: string } }) => r.data.id);
    expect(entries.map((e) => [e.record_id, e.action]).sort()).toEqual(created.map((c: string) => [c, 'created']).sort());
  });
});
