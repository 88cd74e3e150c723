import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

const ULID_CHARS = '0123456789abcdefghjkmnpqrstvwxyz';
function fakeId(prefix: string): string {
  return `${prefix}_${Array.from(randomBytes(26), (b) => ULID_CHARS[b % 32]).join('')}`;
}

describe('Listing contacts', () => {
  let stack: TestStack;
  let seq = 0;
  const email = (label = 'p') => `${label}.${Date.now()}.${++seq}@example.com`;

  /** Each test lists under an owner of its own, so tests never see each other's contacts. */
  async function createFor(owner: string, fields: Record<string, unknown> = {}) {
    const res = await stack.api.post('/contacts', { email: email(), owner_id: owner, ...fields });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; email: string; created_at: string };
  }
  /** A team member of its own per test; owner_id must name an existing user. */
  async function newOwner(): Promise<string> {
    const res = await stack.api.post('/users', { name: 'Owner', email: email('owner') });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }
  const ids = (items: { id: string }[]) => items.map((i) => i.id);

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  it('lists the contact subset in creation order', async () => {
    const owner = await newOwner();
    const a = await createFor(owner, { first_name: 'A', stage: 'lead' });
    const b = await createFor(owner, { first_name: 'B' });
    const res = await stack.api.get(`/contacts?owner_id=${owner}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [a, b], has_more: false });
    expect(res.body).not.toHaveProperty('next_cursor');
  });

  it('pages with limit, has_more and next_cursor only while more exist', async () => {
    const owner = await newOwner();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createFor(owner));
    const first = await stack.api.get(`/contacts?owner_id=${owner}&limit=2`);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await stack.api.get(`/contacts?owner_id=${owner}&limit=2&cursor=${first.body.next_cursor}`);
    const third = await stack.api.get(`/contacts?owner_id=${owner}&limit=2&cursor=${second.body.next_cursor}`);
    expect(third.body.has_more).toBe(false);
    expect(third.body).not.toHaveProperty('next_cursor');
    expect([...ids(first.body.data), ...ids(second.body.data), ...ids(third.body.data)]).toEqual(ids(created));
  });

  it('rejects bad limits and cursors', async () => {
    for (const q of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5']) {
      const res = await stack.api.get(`/contacts?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('limit');
    }
    const badCursor = await stack.api.get('/contacts?cursor=not-a-cursor');
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.details[0].field).toBe('cursor');
    expect((await stack.api.get('/contacts?limit=200')).status).toBe(200);
  });

  it('filters by stage, source, company_id and owner_id', async () => {
    const owner = await newOwner();
    const company = (await stack.api.post('/companies', { name: 'Filter Co' })).body.data;
    const lead = await createFor(owner, { stage: 'lead', source: 'paid' });
    const customer = await createFor(owner, { stage: 'customer', source: 'paid', company_id: company.id });
    const other = await createFor(owner, { stage: 'customer', source: 'event' });
    expect(ids(await stack.api.listAll(`/contacts?owner_id=${owner}&stage=customer`))).toEqual([customer.id, other.id]);
    expect(ids(await stack.api.listAll(`/contacts?owner_id=${owner}&source=paid`))).toEqual([lead.id, customer.id]);
    expect(ids(await stack.api.listAll(`/contacts?company_id=${company.id}`))).toEqual([customer.id]);
    expect(ids(await stack.api.listAll(`/contacts?owner_id=${owner}&stage=customer&source=paid`))).toEqual([customer.id]);
    expect(await stack.api.listAll(`/contacts?owner_id=${fakeId('user')}`)).toEqual([]);
    const bad = await stack.api.get('/contacts?stage=vip&source=tv');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['source', 'stage']);
  });

  it('searches first name, last name, full name and email, ignoring case', async () => {
    const owner = await newOwner();
    const tag = `zq${randomBytes(3).toString('hex')}`;
    const ada = await createFor(owner, { first_name: `Ada${tag}`, last_name: 'Byron' });
    const bob = await createFor(owner, { first_name: 'Bob', last_name: `Mc${tag}` });
    const carol = await createFor(owner, { email: `carol.${tag}@example.org` });
    const search = async (term: string) => ids(await stack.api.listAll(`/contacts?owner_id=${owner}&search=${encodeURIComponent(term)}`));
    expect(await search(tag.toUpperCase())).toEqual([ada.id, bob.id, carol.id]);
    expect(await search(`ada${tag}`)).toEqual([ada.id]);
    expect(await search(`ada${tag} byron`)).toEqual([ada.id]);
    expect(await search(`bob mc${tag}`)).toEqual([bob.id]);
    expect(await search(`carol.${tag}@example.org`)).toEqual([carol.id]);
    expect(await search('byron')).toEqual([ada.id]);
    // LIKE wildcards in the term match themselves only.
    expect(await search('%')).toEqual([]);
    expect(await search('_')).toEqual([]);
    expect((await stack.api.get(`/contacts?search=${'x'.repeat(201)}`)).status).toBe(400);
  });

  it('filters by ICP score range and scoring time', async () => {
    const owner = await newOwner();
    const low = await createFor(owner, { icp_score: 10, icp_scored_at: '2030-01-01T00:00:00Z' });
    const mid = await createFor(owner, { icp_score: 50, icp_scored_at: '2030-02-01T00:00:00Z' });
    const high = await createFor(owner, { icp_score: 90, icp_scored_at: '2030-03-01T00:00:00Z' });
    await createFor(owner);
    const list = async (q: string) => ids(await stack.api.listAll(`/contacts?owner_id=${owner}&${q}`));
    expect(await list('icp_score_min=50')).toEqual([mid.id, high.id]);
    expect(await list('icp_score_max=50')).toEqual([low.id, mid.id]);
    expect(await list('icp_score_min=11&icp_score_max=89')).toEqual([mid.id]);
    expect(await list('icp_scored_after=2030-01-15T00:00:00Z')).toEqual([mid.id, high.id]);
    expect(await list('icp_scored_before=2030-02-01T00:00:00Z')).toEqual([low.id]);
    expect(await list('icp_scored_after=2030-01-01T00:00:00Z&icp_scored_before=2030-03-01T00:00:00Z')).toEqual([mid.id]);
    for (const q of ['icp_score_min=abc', 'icp_score_max=101', 'icp_score_min=-1', 'icp_scored_after=yesterday']) {
      expect((await stack.api.get(`/contacts?${q}`)).status).toBe(400);
    }
  });

  it('filters by creation time, exclusive at both ends', async () => {
    const owner = await newOwner();
    const a = await createFor(owner);
    await new Promise((r) => setTimeout(r, 5));
    const b = await createFor(owner);
    await new Promise((r) => setTimeout(r, 5));
    const c = await createFor(owner);
    const list = async (q: string) => ids(await stack.api.listAll(`/contacts?owner_id=${owner}&${q}`));
    expect(await list(`created_after=${a.created_at}`)).toEqual([b.id, c.id]);
    expect(await list(`created_before=${c.created_at}`)).toEqual([a.id, b.id]);
    expect(await list(`created_after=${a.created_at}&created_before=${c.created_at}`)).toEqual([b.id]);
    expect((await stack.api.get('/contacts?created_after=2030-13-01')).status).toBe(400);
  });

  it('serves every contact exactly once while others are inserted and deleted during paging', async () => {
    const owner = await newOwner();
    const initial: string[] = [];
    for (let i = 0; i < 30; i++) initial.push((await createFor(owner)).id);
    const toDelete = new Set(initial.filter((_, i) => i % 4 === 1));
    const seen: string[] = [];
    const inserted: string[] = [];
    let cursor: string | undefined;
    let page = 0;
    do {
      const res = await stack.api.get(`/contacts?owner_id=${owner}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body.data));
      cursor = res.body.next_cursor;
      // Between pages: new contacts arrive and some not yet served are deleted.
      const churn: Promise<unknown>[] = [createFor(owner).then((c) => inserted.push(c.id))];
      if (page < 6) {
        const victim = [...toDelete].find((id) => !seen.includes(id));
        if (victim) {
          toDelete.delete(victim);
          churn.push(stack.api.delete(`/contacts/${victim}`).then((r) => expect(r.status).toBe(204)));
          initial.splice(initial.indexOf(victim), 1);
        }
      }
      await Promise.all(churn);
      page++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of initial) expect(seen).toContain(id);
    // Contacts inserted while paging come after the cursor, so all but possibly the last one are served too.
    for (const id of inserted.slice(0, -1)) expect(seen).toContain(id);
  });
});
