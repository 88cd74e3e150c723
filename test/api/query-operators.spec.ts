import { randomBytes } from 'crypto';
import { contactsQueryHelpers, Direction, SortKey, sortedCopy, startContactsQueryStack } from '../support/contacts-query';
import { Expr } from '../support/query-model';
import { TestStack } from '../support/stack';

/**
 * POST /contacts/query, rule by rule: each operator on each type, MongoDB's null semantics, text matched
 * literally, the fields an item carries, and paths through the contact's company and owner.
 */
describe('Querying contacts (POST /contacts/query)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startContactsQueryStack();
  });
  afterAll(() => stack.stop());
  const { query, queryAll, newOwner, newCompany, createContact, scoped, fixture, expectInvalid, underFilter } = contactsQueryHelpers(() => stack);

  describe('operators', () => {
    it('on a number field', async () => {
      const f = await fixture({ ten: { icp_score: 10 }, fifty: { icp_score: 50 }, ninety: { icp_score: 90 }, none: {} });
      expect(await f.where({ icp_score: 50 })).toEqual(['fifty']);
      expect(await f.where({ icp_score: { $eq: 50 } })).toEqual(['fifty']);
      expect(await f.where({ icp_score: { $ne: 50 } })).toEqual(['ninety', 'none', 'ten']);
      expect(await f.where({ icp_score: { $gt: 10 } })).toEqual(['fifty', 'ninety']);
      expect(await f.where({ icp_score: { $gte: 50 } })).toEqual(['fifty', 'ninety']);
      expect(await f.where({ icp_score: { $lt: 50 } })).toEqual(['ten']);
      expect(await f.where({ icp_score: { $lte: 50 } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $gt: 10, $lt: 90 } })).toEqual(['fifty']);
      expect(await f.where({ icp_score: { $in: [10, 90, 77] } })).toEqual(['ninety', 'ten']);
      expect(await f.where({ icp_score: { $nin: [10, 90] } })).toEqual(['fifty', 'none']);
      expect(await f.where({ icp_score: { $exists: true } })).toEqual(['fifty', 'ninety', 'ten']);
      expect(await f.where({ icp_score: { $exists: false } })).toEqual(['none']);
    });

    it('on a custom number field, missing values counting as null', async () => {
      const f = await fixture({
        neg: { custom_fields: { score2: -2.5 } },
        two: { custom_fields: { score2: 2 } },
        big: { custom_fields: { score2: 1000 } },
        none: {},
      });
      expect(await f.where({ 'custom_fields.score2': 2 })).toEqual(['two']);
      // Numbers compare as numbers, not as the text JSON stores them as.
      expect(await f.where({ 'custom_fields.score2': { $gt: 10 } })).toEqual(['big']);
      expect(await f.where({ 'custom_fields.score2': { $lt: 0 } })).toEqual(['neg']);
      expect(await f.where({ 'custom_fields.score2': { $gte: -2.5, $lte: 2 } })).toEqual(['neg', 'two']);
      expect(await f.where({ 'custom_fields.score2': { $ne: 2 } })).toEqual(['big', 'neg', 'none']);
      expect(await f.where({ 'custom_fields.score2': { $in: [1000, null] } })).toEqual(['big', 'none']);
      expect(await f.where({ 'custom_fields.score2': null })).toEqual(['none']);
      expect(await f.where({ 'custom_fields.score2': { $exists: true } })).toEqual(['big', 'neg', 'two']);
    });

    it('on a string field: equality is exact, the text operators ignore case', async () => {
      const f = await fixture({ ada: { first_name: 'Ada' }, bob: { first_name: 'Bob' }, cy: { first_name: 'Cy Adams' }, none: {} });
      expect(await f.where({ first_name: 'Ada' })).toEqual(['ada']);
      expect(await f.where({ first_name: 'ada' })).toEqual([]);
      expect(await f.where({ first_name: { $ne: 'Ada' } })).toEqual(['bob', 'cy', 'none']);
      // Letters of one case compare the same under any collation.
      expect(await f.where({ first_name: { $gt: 'B' } })).toEqual(['bob', 'cy']);
      expect(await f.where({ first_name: { $gte: 'Bob' } })).toEqual(['bob', 'cy']);
      expect(await f.where({ first_name: { $lt: 'B' } })).toEqual(['ada']);
      expect(await f.where({ first_name: { $lte: 'Bob' } })).toEqual(['ada', 'bob']);
      expect(await f.where({ first_name: { $in: ['Bob', 'Nobody'] } })).toEqual(['bob']);
      expect(await f.where({ first_name: { $nin: ['Bob', 'Ada'] } })).toEqual(['cy', 'none']);
      expect(await f.where({ first_name: { $contains: 'AD' } })).toEqual(['ada', 'cy']);
      expect(await f.where({ first_name: { $starts_with: 'b' } })).toEqual(['bob']);
      expect(await f.where({ first_name: { $ends_with: 'AMS' } })).toEqual(['cy']);
      expect(await f.where({ first_name: { $contains: 'y a' } })).toEqual(['cy']);
      expect(await f.where({ first_name: { $exists: false } })).toEqual(['none']);
    });

    it('on an enum field', async () => {
      const f = await fixture({ lead: { stage: 'lead' }, customer: { stage: 'customer' }, churned: { stage: 'churned' }, none: {} });
      expect(await f.where({ stage: 'lead' })).toEqual(['lead']);
      expect(await f.where({ stage: { $eq: 'customer' } })).toEqual(['customer']);
      expect(await f.where({ stage: { $ne: 'lead' } })).toEqual(['churned', 'customer', 'none']);
      expect(await f.where({ stage: { $in: ['lead', 'customer'] } })).toEqual(['customer', 'lead']);
      expect(await f.where({ stage: { $in: ['lead', null] } })).toEqual(['lead', 'none']);
      expect(await f.where({ stage: { $nin: ['lead'] } })).toEqual(['churned', 'customer', 'none']);
      expect(await f.where({ stage: { $exists: true } })).toEqual(['churned', 'customer', 'lead']);
      expect(await f.where({ stage: 'prospect' })).toEqual([]);
    });

    it('on a datetime field, comparing instants', async () => {
      const f = await fixture({
        jan: { icp_score: 1, icp_scored_at: '2030-01-01T00:00:00Z' },
        feb: { icp_score: 1, icp_scored_at: '2030-02-01T00:00:00Z' },
        mar: { icp_score: 1, icp_scored_at: '2030-03-01T00:00:00Z' },
        none: {},
      });
      expect(await f.where({ icp_scored_at: '2030-02-01T00:00:00Z' })).toEqual(['feb']);
      expect(await f.where({ icp_scored_at: { $eq: '2030-02-01T01:00:00+01:00' } })).toEqual(['feb']);
      expect(await f.where({ icp_scored_at: { $ne: '2030-02-01T00:00:00Z' } })).toEqual(['jan', 'mar', 'none']);
      expect(await f.where({ icp_scored_at: { $gt: '2030-01-01T00:00:00Z' } })).toEqual(['feb', 'mar']);
      expect(await f.where({ icp_scored_at: { $gte: '2030-02-01T00:00:00Z' } })).toEqual(['feb', 'mar']);
      expect(await f.where({ icp_scored_at: { $lt: '2030-02-01T00:00:00Z' } })).toEqual(['jan']);
      expect(await f.where({ icp_scored_at: { $lte: '2030-02-01T00:00:00Z' } })).toEqual(['feb', 'jan']);
      expect(await f.where({ icp_scored_at: { $gt: '2030-01-15T00:00:00Z', $lt: '2030-02-15T00:00:00Z' } })).toEqual(['feb']);
      expect(await f.where({ icp_scored_at: { $in: ['2030-01-01T00:00:00Z', '2030-03-01T00:00:00Z'] } })).toEqual(['jan', 'mar']);
      expect(await f.where({ icp_scored_at: { $nin: ['2030-01-01T00:00:00Z'] } })).toEqual(['feb', 'mar', 'none']);
      expect(await f.where({ icp_scored_at: { $exists: false } })).toEqual(['none']);
    });

    it('combines with $and, $or, $not and several keys in one object', async () => {
      const f = await fixture({
        a: { stage: 'lead', icp_score: 10 },
        b: { stage: 'lead', icp_score: 60 },
        c: { stage: 'customer', icp_score: 60 },
        d: { stage: 'customer' },
      });
      expect(await f.where({ stage: 'lead', icp_score: { $gte: 50 } })).toEqual(['b']);
      expect(await f.where({ $and: [{ stage: 'customer' }, { icp_score: 60 }] })).toEqual(['c']);
      expect(await f.where({ $or: [{ icp_score: 10 }, { stage: 'customer', icp_score: null }] })).toEqual(['a', 'd']);
      expect(await f.where({ $not: { stage: 'lead', icp_score: 60 } })).toEqual(['a', 'c', 'd']);
      expect(await f.where({ $not: { $or: [{ stage: 'lead' }, { icp_score: { $gt: 50 } }] } })).toEqual(['d']);
      expect(await f.where({ $and: [{ $or: [{ stage: 'lead' }, { stage: 'customer' }] }, { $not: { icp_score: { $lt: 50 } } }] })).toEqual(['b', 'c', 'd']);
    });

    it('sorts nulls last ascending and first descending, ties by id', async () => {
      const f = await fixture({
        ten: { icp_score: 10, custom_fields: { score2: 1 } },
        fifty: { icp_score: 50, custom_fields: { score2: 5 } },
        tieLow: { icp_score: 70, custom_fields: { score2: 1 } },
        tieHigh: { icp_score: 70, custom_fields: { score2: 9 } },
        none: { custom_fields: { score2: 3 } },
      });
      const score = (direction: Direction): SortKey[] => [{ field: 'icp_score', direction }];
      const tie = sortedCopy([f.ids.tieLow, f.ids.tieHigh]).map((id) => (id === f.ids.tieLow ? 'tieLow' : 'tieHigh'));
      expect(await f.inOrder(undefined, score('asc'))).toEqual(['ten', 'fifty', ...tie, 'none']);
      const desc = await f.inOrder(undefined, score('desc'));
      expect(desc[0]).toBe('none');
      expect(desc.slice(1, 3).sort()).toEqual(['tieHigh', 'tieLow']);
      expect(desc.slice(3)).toEqual(['fifty', 'ten']);
      expect(
        await f.inOrder(undefined, [
          { field: 'icp_score', direction: 'desc' },
          { field: 'custom_fields.score2', direction: 'desc' },
        ]),
      ).toEqual(['none', 'tieHigh', 'tieLow', 'fifty', 'ten']);
      expect(
        await f.inOrder(undefined, [
          { field: 'custom_fields.score2', direction: 'asc' },
          { field: 'icp_score', direction: 'desc' },
        ]),
      ).toEqual(['tieLow', 'ten', 'none', 'fifty', 'tieHigh']);
    });
  });

  describe('null semantics', () => {
    it('follow MongoDB, rule by rule', async () => {
      const f = await fixture({ ten: { icp_score: 10 }, fifty: { icp_score: 50 }, none: {} });
      expect(await f.where({ icp_score: null })).toEqual(['none']);
      expect(await f.where({ icp_score: { $eq: null } })).toEqual(['none']);
      expect(await f.where({ icp_score: { $ne: 10 } })).toEqual(['fifty', 'none']);
      expect(await f.where({ icp_score: { $ne: null } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $gt: 0 } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $gte: 0 } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $lt: 100 } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $lte: 100 } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $in: [10] } })).toEqual(['ten']);
      expect(await f.where({ icp_score: { $in: [10, null] } })).toEqual(['none', 'ten']);
      expect(await f.where({ icp_score: { $nin: [10] } })).toEqual(['fifty', 'none']);
      expect(await f.where({ icp_score: { $nin: [10, null] } })).toEqual(['fifty']);
      expect(await f.where({ $not: { icp_score: { $gt: 20 } } })).toEqual(['none', 'ten']);
      expect(await f.where({ $not: { icp_score: { $lte: 20 } } })).toEqual(['fifty', 'none']);
      expect(await f.where({ $not: { icp_score: 10 } })).toEqual(['fifty', 'none']);
      expect(await f.where({ $not: { icp_score: null } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ $not: { icp_score: { $in: [10, 50] } } })).toEqual(['none']);
      expect(await f.where({ $not: { $not: { icp_score: { $gt: 20 } } } })).toEqual(['fifty']);
      expect(await f.where({ icp_score: { $exists: true } })).toEqual(['fifty', 'ten']);
      expect(await f.where({ icp_score: { $exists: false } })).toEqual(['none']);
    });

    it('hold for a boolean custom field and a relation path', async () => {
      const company = await newCompany('Null Rules Ltd');
      const f = await fixture({
        yes: { custom_fields: { vip: true }, company_id: company.id },
        no: { custom_fields: { vip: false } },
        unset: {},
      });
      expect(await f.where({ 'custom_fields.vip': false })).toEqual(['no']);
      expect(await f.where({ 'custom_fields.vip': { $ne: true } })).toEqual(['no', 'unset']);
      expect(await f.where({ 'custom_fields.vip': null })).toEqual(['unset']);
      expect(await f.where({ $not: { 'custom_fields.vip': true } })).toEqual(['no', 'unset']);
      expect(await f.where({ 'company.name': null })).toEqual(['no', 'unset']);
      expect(await f.where({ 'company.name': { $ne: 'Null Rules Ltd' } })).toEqual(['no', 'unset']);
      expect(await f.where({ 'company.name': { $contains: 'null' } })).toEqual(['yes']);
      expect(await f.where({ $not: { 'company.name': { $contains: 'null' } } })).toEqual(['no', 'unset']);
    });
  });

  describe('strings are literal', () => {
    it('%, _ and \\ in $contains, $starts_with and $ends_with match only themselves', async () => {
      const f = await fixture({
        pct: { first_name: 'a%b' },
        under: { first_name: 'a_b' },
        slash: { first_name: 'a\\b' },
        axb: { first_name: 'axb' },
        ab: { first_name: 'ab' },
        hundred: { first_name: '100%' },
      });
      expect(await f.where({ first_name: { $contains: '%' } })).toEqual(['hundred', 'pct']);
      expect(await f.where({ first_name: { $contains: '_' } })).toEqual(['under']);
      expect(await f.where({ first_name: { $contains: '\\' } })).toEqual(['slash']);
      expect(await f.where({ first_name: { $contains: 'a%b' } })).toEqual(['pct']);
      expect(await f.where({ first_name: { $contains: 'A_B' } })).toEqual(['under']);
      expect(await f.where({ first_name: { $contains: 'a\\b' } })).toEqual(['slash']);
      expect(await f.where({ first_name: { $starts_with: '%' } })).toEqual([]);
      expect(await f.where({ first_name: { $starts_with: 'a\\' } })).toEqual(['slash']);
      expect(await f.where({ first_name: { $starts_with: 'a_' } })).toEqual(['under']);
      expect(await f.where({ first_name: { $ends_with: '%' } })).toEqual(['hundred']);
      expect(await f.where({ first_name: { $ends_with: '\\b' } })).toEqual(['slash']);
      expect(await f.where({ first_name: { $ends_with: '_' } })).toEqual([]);
      expect(await f.where({ first_name: 'a%b' })).toEqual(['pct']);
      expect(await f.where({ first_name: { $in: ['a_b', 'a\\b'] } })).toEqual(['slash', 'under']);
    });

    it('hostile values are bound, never run: they match literally and never answer 5xx', async () => {
      const stored = [
        "'; DROP TABLE contacts; --",
        "' OR '1'='1",
        'Robert"); DROP TABLE contacts;--',
        "\\'; SELECT pg_sleep(30); --",
        '$1',
        ':name::text',
        '*/ OR 1=1 /*',
        '%%',
        '\\%\\_',
      ];
      const spec: Record<string, Record<string, unknown>> = {};
      stored.forEach((value, i) => (spec[`h${i}`] = { first_name: value, custom_fields: { nickname: value } }));
      const f = await fixture(spec);
      for (const [i, value] of stored.entries()) {
        expect({ value, got: await f.where({ first_name: value }) }).toEqual({ value, got: [`h${i}`] });
        expect({ value, got: await f.where({ 'custom_fields.nickname': { $eq: value } }) }).toEqual({ value, got: [`h${i}`] });
        const containing = stored.flatMap((other, j) => (other.toLowerCase().includes(value.toLowerCase()) ? [`h${j}`] : [])).sort();
        expect({ value, got: await f.where({ first_name: { $contains: value } }) }).toEqual({ value, got: containing });
        const starting = stored.flatMap((other, j) => (other.toLowerCase().startsWith(value.toLowerCase()) ? [`h${j}`] : [])).sort();
        expect({ value, got: await f.where({ 'custom_fields.nickname': { $starts_with: value } }) }).toEqual({ value, got: starting });
      }
      // Values that cannot be stored as they are still get an answer, not a server error.
      for (const value of ['\u0000', 'a\u0000b', '\ud800', 'x'.repeat(20_000), "'; DROP TABLE contacts; --"]) {
        for (const filter of [
          { first_name: value },
          { email: { $contains: value } },
          { 'company.name': { $starts_with: value } },
          { 'owner.email': { $ends_with: value } },
          { 'custom_fields.nickname': { $in: [value, null] } },
          { icp_scored_at: { $gt: value } },
        ]) {
          const res = await query({ filter: scoped(f.owner.id, filter) });
          expect({ filter, status: res.status < 500 }).toEqual({ filter, status: true });
        }
      }
      // Hostile paths are unknown fields, not SQL.
      for (const path of ['first_name; DROP TABLE contacts; --', "custom_fields.x'); DROP TABLE contacts; --", 'company.name"--', 'owner.email) OR (1=1']) {
        await expectInvalid({ filter: { [path]: 'x' } }, underFilter);
        await expectInvalid({ sort: [{ field: path, direction: 'asc' }] }, 'sort.0.field');
        await expectInvalid({ fields: ['email', path] }, 'fields.1');
      }
      // The table is still there and whole.
      const listed = await stack.api.listAll(`/contacts?owner_id=${f.owner.id}`);
      expect(listed).toHaveLength(stored.length);
    });
  });

  describe('fields', () => {
    it('without fields, items are exactly what GET /contacts lists', async () => {
      const company = await newCompany('Summary Co', `summary-${randomBytes(3).toString('hex')}.example`);
      const f = await fixture({
        full: {
          first_name: 'Full',
          last_name: 'Fields',
          stage: 'customer',
          source: 'paid',
          company_id: company.id,
          icp_score: 42,
          custom_fields: { score2: 1 },
        },
        bare: {},
      });
      const listed = await stack.api.listAll(`/contacts?owner_id=${f.owner.id}`);
      const queried = await queryAll({ filter: { owner_id: f.owner.id } });
      const byId = (items: Array<{ id: string }>) => Object.fromEntries(items.map((i) => [i.id, i]));
      expect(listed).toHaveLength(2);
      expect(byId(queried)).toEqual(byId(listed));
    });

    it('with fields, items are the id and the listed paths, custom fields and relations nested', async () => {
      const company = await newCompany('Fields Co', `fields-${randomBytes(3).toString('hex')}.example`);
      const f = await fixture({
        rich: { first_name: 'Rich', company_id: company.id, custom_fields: { score2: 7, nickname: 'Ricky' } },
        poor: { first_name: 'Poor', custom_fields: { nickname: 'Po' } },
      });
      const owner = f.owner;
      const select = async (fields: string[]) => {
        const items = await queryAll({ filter: { owner_id: owner.id }, fields });
        return Object.fromEntries(items.map((i) => [i.id === f.ids.rich ? 'rich' : i.id === f.ids.poor ? 'poor' : i.id, i]));
      };
      const rich = (await stack.api.get(`/contacts/${f.ids.rich}`)).body.data;

      expect(await select(['first_name'])).toEqual({ rich: { id: f.ids.rich, first_name: 'Rich' }, poor: { id: f.ids.poor, first_name: 'Poor' } });
      expect(await select(['id'])).toEqual({ rich: { id: f.ids.rich }, poor: { id: f.ids.poor } });
      expect((await select(['email', 'icp_score', 'created_at'])).rich).toEqual({
        id: f.ids.rich,
        email: rich.email,
        icp_score: null,
        created_at: rich.created_at,
      });
      expect((await select(['custom_fields.score2', 'custom_fields.nickname'])).rich).toEqual({
        id: f.ids.rich,
        custom_fields: { score2: 7, nickname: 'Ricky' },
      });

      const nested = await select(['email', 'custom_fields.nickname', 'company.name', 'owner.email']);
      expect(nested.rich).toEqual({
        id: f.ids.rich,
        email: rich.email,
        custom_fields: { nickname: 'Ricky' },
        company: { name: 'Fields Co' },
        owner: { email: owner.email },
      });
      expect(nested.poor).toEqual({
        id: f.ids.poor,
        email: expect.any(String),
        custom_fields: { nickname: 'Po' },
        company: null,
        owner: { email: owner.email },
      });

      const both = await select(['company.name', 'company.domain']);
      expect(both.rich).toEqual({ id: f.ids.rich, company: { name: 'Fields Co', domain: company.domain } });
      expect(both.poor).toEqual({ id: f.ids.poor, company: null });

      // A custom field the contact has no value for is null inside the nesting, not a missing nesting.
      const missing = await select(['custom_fields.score2']);
      expect(missing.poor).toEqual({ id: f.ids.poor, custom_fields: { score2: null } });
    });
  });

  describe('relation paths', () => {
    it('company.<field> selects exactly the contacts of that company', async () => {
      const tag = randomBytes(3).toString('hex');
      const x = await newCompany('X Corp', `x-${tag}.example`);
      const y = await newCompany('Y Corp', `y-${tag}.example`);
      const noDomain = await newCompany('Nameless');
      const f = await fixture({
        x1: { company_id: x.id },
        x2: { company_id: x.id },
        y1: { company_id: y.id },
        n1: { company_id: noDomain.id },
        solo: {},
      });
      expect(await f.where({ 'company.domain': `x-${tag}.example` })).toEqual(['x1', 'x2']);
      expect(await f.where({ 'company.domain': { $in: [`x-${tag}.example`, `y-${tag}.example`] } })).toEqual(['x1', 'x2', 'y1']);
      expect(await f.where({ 'company.domain': null })).toEqual(['n1', 'solo']);
      expect(await f.where({ 'company.domain': { $ne: `x-${tag}.example` } })).toEqual(['n1', 'solo', 'y1']);
      expect(await f.where({ 'company.name': { $starts_with: 'y c' } })).toEqual(['y1']);
      expect(await f.where({ 'company.id': noDomain.id })).toEqual(['n1']);
      // Without the owner scope too: nobody else works at these companies.
      const unscoped = await queryAll({ filter: { 'company.domain': `x-${tag}.example` } });
      expect(sortedCopy(unscoped.map((i) => i.id))).toEqual(sortedCopy([f.ids.x1, f.ids.x2]));
    });

    it('owner.<field> selects exactly the contacts of that owner', async () => {
      const tag = randomBytes(3).toString('hex');
      const alice = await newOwner(`Alice ${tag}`);
      const bob = await newOwner(`Bob ${tag}`);
      const a1 = await createContact({ owner_id: alice.id });
      const a2 = await createContact({ owner_id: alice.id });
      const b1 = await createContact({ owner_id: bob.id });
      const ids = async (filter: Expr) => sortedCopy((await queryAll({ filter })).map((i) => i.id));
      expect(await ids({ 'owner.email': alice.email })).toEqual(sortedCopy([a1.id, a2.id]));
      expect(await ids({ 'owner.email': { $contains: bob.email.toUpperCase() } })).toEqual([b1.id]);
      expect(await ids({ 'owner.name': { $in: [`Alice ${tag}`, `Bob ${tag}`] } })).toEqual(sortedCopy([a1.id, a2.id, b1.id]));
      expect(await ids({ $and: [{ 'owner.name': { $ends_with: tag } }, { $not: { 'owner.email': alice.email } }] })).toEqual([b1.id]);
    });
  });
});
