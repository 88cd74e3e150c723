import { startStack, TestStack } from '../support/stack';

const UNKNOWN_CONTACT = 'cont_01aaaaaaaaaaaaaaaaaaaaaaaa';

describe('Contacts', () => {
  let stack: TestStack;
  let seq = 0;
  const email = (label = 'person') => `${label}.${Date.now()}.${++seq}@example.com`;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  describe('create', () => {
    it('answers 201 with the contact subset, email lowercased', async () => {
      const address = email('Ada');
      const res = await stack.api.post('/contacts', {
        email: `  ${address.toUpperCase()} `,
        first_name: 'Ada',
        last_name: 'Lovelace',
        phone: '+44 20 7946 0000',
        title: 'Analyst',
        stage: 'lead',
        source: 'referral',
        source_detail: 'spring campaign',
        icp_score: 87,
        metadata: { tier: 'gold' },
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body.data).sort()).toEqual(['created_at', 'email', 'first_name', 'id', 'last_name', 'source', 'stage', 'updated_at']);
      expect(res.body.data).toMatchObject({ email: address.toLowerCase(), first_name: 'Ada', last_name: 'Lovelace', stage: 'lead', source: 'referral' });
      expect(res.body.data.id).toMatch(/^cont_[0-9a-z]{26}$/);
      expect(res.body.data.created_at).toBe(res.body.data.updated_at);
      expect(new Date(res.body.data.created_at).toISOString()).toBe(res.body.data.created_at);
    });

    it('requires a valid email', async () => {
      const missing = await stack.api.post('/contacts', { first_name: 'No email' });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'email', code: 'required' }] });
      const bad = await stack.api.post('/contacts', { email: 'not-an-email' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual([expect.objectContaining({ field: 'email', code: 'invalid_value' })]);
      const wrongType = await stack.api.post('/contacts', { email: 42 });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.error.details[0].field).toBe('email');
    });

    it('rejects values outside the spec sets, naming each field', async () => {
      const res = await stack.api.post('/contacts', {
        email: email(),
        stage: 'champion',
        source: 'tv',
        icp_score: 101,
        owner_id: 'bob',
        company_id: 'acme',
        colour: 'red',
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
      expect(fields).toEqual(['colour', 'company_id', 'icp_score', 'owner_id', 'source', 'stage']);
      expect((await stack.api.post('/contacts', { email: email(), icp_score: 7.5 })).status).toBe(400);
      expect((await stack.api.post('/contacts', { email: email(), icp_score: -1 })).status).toBe(400);
      expect((await stack.api.post('/contacts', { email: email(), icp_score: '50' })).status).toBe(400);
    });

    it('enforces limits on strings and metadata', async () => {
      expect((await stack.api.post('/contacts', { email: email(), first_name: 'x'.repeat(256) })).status).toBe(400);
      const tooManyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      const res = await stack.api.post('/contacts', { email: email(), metadata: tooManyKeys });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('metadata');
      expect((await stack.api.post('/contacts', { email: email(), metadata: { big: 'x'.repeat(17000) } })).status).toBe(400);
      expect((await stack.api.post('/contacts', { email: email(), metadata: ['a'] })).status).toBe(400);
      expect((await stack.api.post('/contacts', { email: email(), metadata: { [`${'k'.repeat(41)}`]: 1 } })).status).toBe(400);
    });

    it('answers 409 for an email already used, whatever its case', async () => {
      const address = email('dup');
      expect((await stack.api.post('/contacts', { email: address })).status).toBe(201);
      const again = await stack.api.post('/contacts', { email: address.toUpperCase() });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'email', code: 'duplicate' }] });
    });

    it('lets exactly one of many parallel creates with one email win', async () => {
      const address = email('race');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => stack.api.post('/contacts', { email: i % 2 ? address : address.toUpperCase(), first_name: `r${i}` })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(11);
      const listed = await stack.api.listAll(`/contacts?search=${encodeURIComponent(address)}`);
      expect(listed).toHaveLength(1);
    });

    it('checks that company_id names an existing company', async () => {
      const res = await stack.api.post('/contacts', { email: email(), company_id: 'comp_01aaaaaaaaaaaaaaaaaaaaaaaa' });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'company_id', code: 'not_found' })]);
    });
  });

  describe('get', () => {
    it('returns the full record with relationships and included summaries', async () => {
      const company = (await stack.api.post('/companies', { name: 'Acme Ltd', domain: `acme-${Date.now()}.com` })).body.data;
      const owner = (await stack.api.post('/users', { name: 'Olive Owner', email: email('owner') })).body.data;
      const created = (
        await stack.api.post('/contacts', {
          email: email('full'),
          first_name: 'Grace',
          company_id: company.id,
          owner_id: owner.id,
          icp_score: 40,
          icp_score_reason: 'mid-market',
          icp_scored_at: '2030-05-01T10:00:00Z',
        })
      ).body.data;
      const res = await stack.api.get(`/contacts/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          id: created.id,
          email: created.email,
          first_name: 'Grace',
          last_name: null,
          phone: null,
          title: null,
          stage: null,
          source: null,
          source_detail: null,
          company_id: company.id,
          owner_id: owner.id,
          icp_score: 40,
          icp_score_reason: 'mid-market',
          icp_scored_at: '2030-05-01T10:00:00.000Z',
          metadata: {},
          custom_fields: {},
          relationships: {
            company: { type: 'company', id: company.id, name: 'Acme Ltd' },
            owner: { type: 'user', id: owner.id, name: 'Olive Owner' },
          },
          created_at: created.created_at,
          updated_at: created.updated_at,
        },
        included: [
          { type: 'company', id: company.id, name: 'Acme Ltd' },
          { type: 'user', id: owner.id, name: 'Olive Owner' },
        ],
      });
    });

    it('sets icp_scored_at when a score arrives without one', async () => {
      const created = (await stack.api.post('/contacts', { email: email(), icp_score: 10 })).body.data;
      const full = (await stack.api.get(`/contacts/${created.id}`)).body.data;
      expect(Date.parse(full.icp_scored_at)).toBeGreaterThanOrEqual(Date.parse(created.created_at) - 1000);
    });

    it('answers 404 for unknown and malformed ids', async () => {
      const res = await stack.api.get(`/contacts/${UNKNOWN_CONTACT}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect((await stack.api.get('/contacts/nonsense')).status).toBe(404);
    });
  });

  describe('update', () => {
    it('changes only the given fields, clears with null and returns the record as get does', async () => {
      const created = (await stack.api.post('/contacts', { email: email(), first_name: 'Alan', last_name: 'Turing', stage: 'lead', title: 'Dr' })).body.data;
      await new Promise((r) => setTimeout(r, 5));
      const res = await stack.api.patch(`/contacts/${created.id}`, { stage: 'customer', title: null, metadata: { plan: 'pro' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: created.id,
        first_name: 'Alan',
        last_name: 'Turing',
        stage: 'customer',
        title: null,
        metadata: { plan: 'pro' },
      });
      expect(res.body.data.relationships).toEqual({ company: null, owner: null });
      expect(res.body.included).toEqual([]);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
      expect((await stack.api.get(`/contacts/${created.id}`)).body.data).toEqual(res.body.data);
    });

    it('re-checks email uniqueness and refuses to clear email', async () => {
      const first = (await stack.api.post('/contacts', { email: email('first') })).body.data;
      const second = (await stack.api.post('/contacts', { email: email('second') })).body.data;
      const clash = await stack.api.patch(`/contacts/${second.id}`, { email: first.email.toUpperCase() });
      expect(clash.status).toBe(409);
      expect(clash.body.error.code).toBe('conflict');
      expect((await stack.api.patch(`/contacts/${second.id}`, { email: null })).status).toBe(400);
      const fresh = email('Fresh');
      const moved = await stack.api.patch(`/contacts/${second.id}`, { email: fresh });
      expect(moved.status).toBe(200);
      expect(moved.body.data.email).toBe(fresh.toLowerCase());
      // The same address in another case is the contact's own email, not a conflict.
      expect((await stack.api.patch(`/contacts/${second.id}`, { email: fresh.toUpperCase() })).status).toBe(200);
    });

    it('validates the body and answers 404 for an unknown contact', async () => {
      const created = (await stack.api.post('/contacts', { email: email() })).body.data;
      const bad = await stack.api.patch(`/contacts/${created.id}`, { stage: 'vip' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual([expect.objectContaining({ field: 'stage' })]);
      expect((await stack.api.patch(`/contacts/${UNKNOWN_CONTACT}`, { stage: 'lead' })).status).toBe(404);
    });

    it('leaves updated_at alone when nothing changes', async () => {
      const created = (await stack.api.post('/contacts', { email: email(), stage: 'lead' })).body.data;
      const res = await stack.api.patch(`/contacts/${created.id}`, { stage: 'lead' });
      expect(res.status).toBe(200);
      expect(res.body.data.updated_at).toBe(created.updated_at);
    });
  });

  describe('delete', () => {
    it('answers 204, then 404', async () => {
      const created = (await stack.api.post('/contacts', { email: email() })).body.data;
      const res = await stack.api.delete(`/contacts/${created.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await stack.api.get(`/contacts/${created.id}`)).status).toBe(404);
      expect((await stack.api.delete(`/contacts/${created.id}`)).status).toBe(404);
    });

    it('frees the email for a new contact', async () => {
      const address = email();
      const created = (await stack.api.post('/contacts', { email: address })).body.data;
      await stack.api.delete(`/contacts/${created.id}`);
      expect((await stack.api.post('/contacts', { email: address })).status).toBe(201);
    });
  });
});
