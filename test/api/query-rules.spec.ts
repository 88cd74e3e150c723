import { contactsQueryHelpers, startContactsQueryStack } from '../support/contacts-query';
import { Expr } from '../support/query-model';
import { TestStack } from '../support/stack';

/**
 * POST /contacts/query refuses what it cannot answer, naming each bad path (unknown fields and operators,
 * wrong values, the limits, a cursor of another query), is open to the keys that may read, and pages
 * consistently while contacts are written.
 */
describe('Querying contacts (POST /contacts/query)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startContactsQueryStack();
  });
  afterAll(() => stack.stop());
  const { query, newOwner, createContact, scoped, fixture, expectInvalid, underFilter, expectBadCursor } = contactsQueryHelpers(() => stack);

  describe('invalid queries', () => {
    it('unknown fields and operators name their path, and list valid fields', async () => {
      const unknown = await expectInvalid({ filter: { $and: [{ email: 'a@example.com' }, { nope: 1 }] } }, 'filter.$and.1.nope');
      const detail = unknown.body.error.details.find((d: { field: string }) => d.field === 'filter.$and.1.nope');
      expect(detail.message).toContain('email');
      await expectInvalid({ filter: { 'custom_fields.undefined_here': 1 } }, 'filter.custom_fields.undefined_here');
      await expectInvalid({ filter: { 'company.nope': 'x' } }, 'filter.company.nope');
      await expectInvalid({ filter: { 'company.owner.email': 'x' } }, 'filter.company.owner.email');
      await expectInvalid({ filter: { metadata: 'x' } }, 'filter.metadata');
      await expectInvalid({ filter: { $nor: [{ email: 'x' }] } }, 'filter.$nor');
      await expectInvalid({ filter: { $or: [{ email: 'x' }, { icp_score: { $near: 1 } }] } }, ['filter.$or.1.icp_score', 'filter.$or.1.icp_score.$near']);
      await expectInvalid({ filter: { icp_score: { $regex: '.*' } } }, ['filter.icp_score', 'filter.icp_score.$regex']);
      await expectInvalid(
        {
          sort: [
            { field: 'icp_score', direction: 'asc' },
            { field: 'nope', direction: 'asc' },
          ],
        },
        'sort.1.field',
      );
      await expectInvalid({ sort: [{ field: 'custom_fields', direction: 'asc' }] }, 'sort.0.field');
      await expectInvalid({ sort: [{ field: 'email', direction: 'up' }] }, 'sort.0.direction');
      await expectInvalid({ fields: ['email', 'first_name', 'nope'] }, 'fields.2');
      await expectInvalid({ fields: ['email', 'company.nope'] }, 'fields.1');
    });

    it('operators that do not fit the type, values of the wrong type and values outside an enum', async () => {
      await expectInvalid({ filter: { $and: [{ email: { $exists: true } }, { icp_score: { $contains: '1' } }] } }, [
        'filter.$and.1.icp_score',
        'filter.$and.1.icp_score.$contains',
      ]);
      await expectInvalid({ filter: { 'custom_fields.score2': { $starts_with: '1' } } }, [
        'filter.custom_fields.score2',
        'filter.custom_fields.score2.$starts_with',
      ]);
      await expectInvalid({ filter: { 'custom_fields.vip': { $gt: true } } }, ['filter.custom_fields.vip', 'filter.custom_fields.vip.$gt']);
      await expectInvalid({ filter: { icp_score: 'high' } }, 'filter.icp_score');
      await expectInvalid({ filter: { icp_score: { $gt: '10' } } }, ['filter.icp_score', 'filter.icp_score.$gt']);
      await expectInvalid({ filter: { icp_score: { $in: [1, 'x'] } } }, ['filter.icp_score', 'filter.icp_score.$in', 'filter.icp_score.$in.1']);
      await expectInvalid({ filter: { icp_score: { $in: 5 } } }, ['filter.icp_score', 'filter.icp_score.$in']);
      await expectInvalid({ filter: { icp_scored_at: { $gt: 'yesterday' } } }, ['filter.icp_scored_at', 'filter.icp_scored_at.$gt']);
      await expectInvalid({ filter: { 'custom_fields.score2': 'abc' } }, 'filter.custom_fields.score2');
      await expectInvalid({ filter: { first_name: 5 } }, 'filter.first_name');
      await expectInvalid({ filter: { first_name: { $contains: 5 } } }, ['filter.first_name', 'filter.first_name.$contains']);
      await expectInvalid({ filter: { email: { $exists: 'yes' } } }, ['filter.email', 'filter.email.$exists']);
      await expectInvalid({ filter: { stage: 'vip' } }, 'filter.stage');
      await expectInvalid({ filter: { source: { $in: ['paid', 'tv'] } } }, ['filter.source', 'filter.source.$in', 'filter.source.$in.1']);
      await expectInvalid({ filter: { $not: [{ email: 'x' }] } }, 'filter.$not');
      await expectInvalid({ filter: { $and: { email: 'x' } } }, 'filter.$and');
    });

    it('empty $and and $or, and the limits on nesting, conditions, $in values, sort keys and fields', async () => {
      await expectInvalid({ filter: { $and: [] } }, 'filter.$and');
      await expectInvalid({ filter: { $and: [{ $or: [] }] } }, 'filter.$and.0.$or');

      const nest = (levels: number): Expr => Array.from({ length: levels }).reduce<Expr>((inner) => ({ $and: [inner] }), { email: 'deep@example.com' });
      expect((await query({ filter: nest(5) })).status).toBe(200);
      await expectInvalid({ filter: nest(12) }, underFilter);

      const leaves = (n: number) => ({ $or: Array.from({ length: n }, (_, i) => ({ email: `c${i}@example.com` })) });
      expect((await query({ filter: leaves(45) })).status).toBe(200);
      await expectInvalid({ filter: leaves(51) }, underFilter);

      const emails = (n: number) => Array.from({ length: n }, (_, i) => `in${i}@example.com`);
      expect((await query({ filter: { email: { $in: emails(500) } } })).status).toBe(200);
      await expectInvalid({ filter: { email: { $in: emails(501) } } }, ['filter.email', 'filter.email.$in']);
      await expectInvalid({ filter: { email: { $nin: emails(501) } } }, ['filter.email', 'filter.email.$nin']);

      const keys = ['icp_score', 'stage', 'source', 'first_name', 'last_name', 'email'].map((field) => ({ field, direction: 'asc' }));
      expect((await query({ sort: keys.slice(0, 5) })).status).toBe(200);
      await expectInvalid({ sort: keys }, 'sort');

      const many = (n: number) => Array.from({ length: n }, () => 'email');
      await expectInvalid({ fields: many(51) }, 'fields');

      await expectInvalid({ limit: 0 }, 'limit');
      await expectInvalid({ limit: 201 }, 'limit');
      expect((await query({ limit: 200 })).status).toBe(200);
      await expectBadCursor({ cursor: 'not-a-cursor' });
    });

    it('a cursor belongs to its query: another filter, sort or fields is refused', async () => {
      const f = await fixture({ a: { icp_score: 20 }, b: { icp_score: 30 }, c: { icp_score: 40 }, d: { icp_score: 50 } });
      const body = {
        filter: scoped(f.owner.id, { icp_score: { $gt: 10 } }),
        sort: [{ field: 'icp_score', direction: 'asc' }],
        fields: ['icp_score'],
        limit: 2,
      };
      const first = await query(body);
      expect(first.status).toBe(200);
      expect(first.body.has_more).toBe(true);
      const cursor = first.body.next_cursor;
      await expectBadCursor({ ...body, cursor, filter: scoped(f.owner.id, { icp_score: { $gt: 20 } }) });
      await expectBadCursor({ ...body, cursor, sort: [{ field: 'icp_score', direction: 'desc' }] });
      await expectBadCursor({ ...body, cursor, fields: ['email'] });
      await expectBadCursor({ ...body, cursor, filter: undefined });
      // The same query goes on from where it was.
      const second = await query({ ...body, cursor });
      expect(second.status).toBe(200);
      expect(second.body.data.map((i: { id: string }) => i.id)).toEqual([f.ids.c, f.ids.d]);
    });
  });

  describe('scopes', () => {
    it('read and read-write keys may query; capture-only keys may not', async () => {
      const keys: Record<string, string> = { 'read-write': stack.apiKey };
      for (const scope of ['read', 'capture-only']) {
        const res = await stack.api.post('/apikeys', { name: `query ${scope}`, scope });
        expect(res.status).toBe(201);
        keys[scope] = res.body.data.key;
      }
      const contact = await createContact({ first_name: 'Scoped' });
      const body = { filter: { email: contact.email } };
      for (const scope of ['read', 'read-write']) {
        const res = await query(body, keys[scope]);
        expect({ scope, status: res.status, ids: res.body.data?.map((i: { id: string }) => i.id) }).toEqual({ scope, status: 200, ids: [contact.id] });
      }
      const denied = await query(body, keys['capture-only']);
      expect({ status: denied.status, code: denied.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    });
  });

  describe('consistency', () => {
    it('sees a write acknowledged before the query started', async () => {
      const owner = await newOwner();
      for (let i = 0; i < 10; i++) {
        const created = await createContact({ owner_id: owner.id, first_name: `Fresh ${i}` });
        const found = await query({ filter: { email: created.email } });
        expect({ i, ids: found.body.data.map((c: { id: string }) => c.id) }).toEqual({ i, ids: [created.id] });

        const renamed = await stack.api.patch(`/contacts/${created.id}`, { first_name: `Renamed ${i}`, icp_score: i });
        expect(renamed.status).toBe(200);
        const after = await query({ filter: scoped(owner.id, { first_name: `Renamed ${i}`, icp_score: i }) });
        expect({ i, ids: after.body.data.map((c: { id: string }) => c.id) }).toEqual({ i, ids: [created.id] });

        expect((await stack.api.delete(`/contacts/${created.id}`)).status).toBe(204);
        const gone = await query({ filter: { email: created.email } });
        expect({ i, ids: gone.body.data }).toEqual({ i, ids: [] });
      }
    });

    it('pages serve every contact that existed throughout exactly once while others are created', async () => {
      for (const direction of ['asc', 'desc'] as const) {
        const owner = await newOwner();
        const initial: string[] = [];
        // Repeated scores and nulls make the keyset rely on the id tie-break and on where nulls go.
        for (let i = 0; i < 24; i++) initial.push((await createContact({ owner_id: owner.id, ...(i % 6 === 5 ? {} : { icp_score: (i % 4) * 25 }) })).id);
        const body = { filter: { owner_id: owner.id }, sort: [{ field: 'icp_score', direction }], limit: 5 };
        const seen: string[] = [];
        const inserted: string[] = [];
        let cursor: string | undefined;
        let round = 0;
        do {
          // New contacts land before, at and after the cursor's position while the page is read.
          const score = [0, 50, 100, null][round % 4];
          const [res] = await Promise.all([
            query({ ...body, ...(cursor ? { cursor } : {}) }),
            createContact({ owner_id: owner.id, ...(score === null ? {} : { icp_score: score }) }).then((c) => inserted.push(c.id)),
          ]);
          expect(res.status).toBe(200);
          seen.push(...res.body.data.map((c: { id: string }) => c.id));
          cursor = res.body.has_more ? res.body.next_cursor : undefined;
          await createContact({ owner_id: owner.id, icp_score: 25 }).then((c) => inserted.push(c.id));
          round++;
          if (round > 100) throw new Error('paging does not end');
        } while (cursor);
        expect({ direction, repeated: seen.filter((id, i) => seen.indexOf(id) !== i) }).toEqual({ direction, repeated: [] });
        expect({ direction, missing: initial.filter((id) => !seen.includes(id)) }).toEqual({ direction, missing: [] });
        expect(seen.every((id) => initial.includes(id) || inserted.includes(id))).toBe(true);
      }
    });
  });
});
