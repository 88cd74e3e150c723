import { randomBytes } from 'crypto';
import fc from 'fast-check';
import { Expr, holds, Kind, Row } from '../support/query-model';
import { propertyRuns } from '../support/property-seeds';
import { startStack, TestStack } from '../support/stack';

/**
 * Relation paths whose records another service keeps: deals to their contact, company and owner (the
 * contacts service), tasks and activities to their deal (the deals service). Answers must be exact, as if
 * the tables were joined, with no service reading the other's tables; a condition that matches too many
 * related records is a 400 that says how to narrow it (QUERY_RELATED_IDS_MAX, set low here).
 */
const SEED = 20261125;
const RUNS = 30;
const RELATED_IDS_MAX = 10;

const kindOf = (path: string): Kind => (path === 'value' ? 'number' : 'string');

describe('Querying across services (deals to contact.*, company.*, owner.*; tasks and activities to deal.*)', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string }> };
  const tag = randomBytes(3).toString('hex');
  let seq = 0;

  beforeAll(async () => {
    stack = await startStack({
      services: ['contacts', 'deals'],
      env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000', QUERY_RELATED_IDS_MAX: String(RELATED_IDS_MAX) },
    });
    pipeline = (await stack.api.post('/pipelines', { name: 'Across', stages: [{ name: 'New', type: 'open' }] })).body.data;
  });
  afterAll(() => stack?.stop());

  async function create(path: string, body: Record<string, unknown>): Promise<{ id: string } & Record<string, any>> {
    const res = await stack.api.post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body.data;
  }
  const contact = (fields: Record<string, unknown> = {}) => create('/contacts', { email: `c${++seq}.${tag}@example.com`, ...fields });
  const deal = (fields: Record<string, unknown> = {}) =>
    create('/deals', { name: `Deal ${++seq}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 0, ...fields });

  /** Every item of a query, following next_cursor. */
  async function queryAll(object: string, body: Record<string, unknown>): Promise<any[]> {
    const items: any[] = [];
    let cursor: string | undefined;
    do {
      const res = await stack.api.post(`/${object}/query`, { ...body, ...(cursor ? { cursor } : {}) });
      if (res.status !== 200) throw new Error(`POST /${object}/query ${JSON.stringify(body)} answered ${res.status}: ${res.text}`);
      items.push(...res.body.data);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
    } while (cursor);
    return items;
  }

  describe('random filters over deals and their contact, company and owner, against a model', () => {
    const rows: Row[] = [];
    let scope: Expr;
    const FIRST_NAMES = ['Ada', 'ada', 'Bo', 'Cy'];
    const STAGES = ['lead', 'customer'];
    const VALUES = [0, 100, 5000];

    beforeAll(async () => {
      const dealsPipeline = (await stack.api.post('/pipelines', { name: `Model ${tag}`, stages: [{ name: 'New', type: 'open' }] })).body.data;
      scope = { pipeline_id: dealsPipeline.id };
      const companies = [await create('/companies', { name: 'Acme', domain: `acme-${tag}.example` }), await create('/companies', { name: 'Nodomain' })];
      const owners = [
        await create('/users', { name: 'Ada Owner', email: `o1.${tag}@example.com` }),
        await create('/users', { name: 'Bo Owner', email: `o2.${tag}@example.com` }),
      ];
      const contacts: Array<{ id: string; first_name: string | null; stage: string | null }> = [];
      for (let i = 0; i < 8; i++) {
        const first_name = i % 5 === 4 ? null : FIRST_NAMES[i % FIRST_NAMES.length];
        const stage = i % 3 === 2 ? null : STAGES[i % 2];
        contacts.push({ ...(await contact({ ...(first_name ? { first_name } : {}), ...(stage ? { stage } : {}) })), first_name, stage });
      }
      for (let i = 0; i < 24; i++) {
        const c = i % 4 === 3 ? null : contacts[(i * 5) % contacts.length];
        const co = i % 3 === 0 ? null : companies[i % 2];
        const owner = i % 5 === 0 ? null : owners[i % 2];
        const value = VALUES[i % 3];
        const created = await create('/deals', {
          name: `Model ${i}`,
          pipeline_id: dealsPipeline.id,
          stage_id: dealsPipeline.stages[0].id,
          value,
          ...(c ? { contact_id: c.id } : {}),
          ...(co ? { company_id: co.id } : {}),
          ...(owner ? { owner_id: owner.id } : {}),
        });
        rows.push({
          id: created.id,
          value,
          'contact.first_name': c?.first_name ?? null,
          'contact.stage': c?.stage ?? null,
          'company.domain': co ? (co.domain ?? null) : null,
          'owner.name': owner?.name ?? null,
        });
      }
    });

    const leaf: fc.Arbitrary<Expr> = fc.oneof(
      fc
        .record({ path: fc.constant('value'), op: fc.constantFrom('$eq', '$ne', '$gt', '$lte'), arg: fc.constantFrom(...VALUES) })
        .map(({ path, op, arg }) => ({ [path]: { [op]: arg } })),
      fc
        .record({ op: fc.constantFrom('$eq', '$ne', '$in', '$nin', '$starts_with', '$exists'), arg: fc.constantFrom(...FIRST_NAMES, null) })
        .map(({ op, arg }) => ({
          'contact.first_name':
            op === '$exists'
              ? { $exists: arg !== null }
              : op === '$in' || op === '$nin'
                ? { [op]: [arg, 'Bo'] }
                : op === '$starts_with'
                  ? { $starts_with: arg ?? 'a' }
                  : { [op]: arg },
        })),
      fc.constantFrom<Expr>(
        { 'contact.stage': 'customer' },
        { 'contact.stage': null },
        { 'contact.stage': { $ne: 'lead' } },
        { 'company.domain': { $exists: true } },
        { 'company.domain': null },
        { 'owner.name': { $starts_with: 'ada' } },
        { 'owner.name': { $ne: 'Bo Owner' } },
        // Two conditions on one related record, answered together.
        { 'contact.first_name': 'Ada', 'contact.stage': { $ne: 'customer' } },
        { 'contact.first_name': { $ne: 'Cy' }, 'contact.stage': { $in: ['lead', null] } },
      ),
    );
    const tree: fc.Arbitrary<Expr> = fc.letrec<{ node: Expr }>((tie) => ({
      node: fc.oneof(
        // The API refuses a filter nested deeper than 8 levels, and the test wraps each tree in one more.
        { depthSize: 'small', withCrossShrink: true, maxDepth: 6 },
        leaf,
        fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((xs) => ({ $and: xs })),
        fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((xs) => ({ $or: xs })),
        tie('node').map((x) => ({ $not: x })),
      ),
    })).node;

    it('pages through exactly the deals the model selects, whatever the tree', async () => {
      for (const { seed, numRuns } of propertyRuns(SEED, RUNS)) {
        await fc.assert(
          fc.asyncProperty(tree, fc.constantFrom(3, 50), async (filter, limit) => {
            const got = (await queryAll('deals', { filter: { $and: [scope, filter] }, limit })).map((d) => d.id);
            const expected = rows.filter((row) => holds(row, filter, kindOf)).map((row) => row.id);
            expect([...got].sort()).toEqual([...expected].sort());
            // Paging never repeats a deal.
            expect(new Set(got).size).toBe(got.length);
          }),
          { seed, numRuns },
        );
      }
    });
  });

  describe('many broad conditions at once', () => {
    let wide: TestStack;
    beforeAll(async () => {
      wide = await startStack({ services: ['contacts', 'deals'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
    });
    afterAll(() => wide?.stop());

    it('refuses, naming the condition, when the ids of all the conditions together would not fit in one answer', async () => {
      const p = (await wide.api.post('/pipelines', { name: 'Wide', stages: [{ name: 'New', type: 'open' }] })).body.data;
      // 340 deals, each with its own contact: 50 conditions matching all 340 contacts are 17,000 ids, over half a megabyte.
      const queue = Array.from({ length: 340 }, (_, i) => i);
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
            const c = await wide.api.post('/contacts', { email: `w${i}.${tag}@wide.example` });
            if (c.status !== 201) throw new Error(`POST /contacts answered ${c.status}: ${c.text}`);
            const d = await wide.api.post('/deals', { name: `W${i}`, pipeline_id: p.id, stage_id: p.stages[0].id, value: i, contact_id: c.body.data.id });
            expect([c.status, d.status]).toEqual([201, 201]);
          }
        }),
      );
      const broad = Array.from({ length: 50 }, (_, i) => ({ 'contact.email': { $ends_with: i % 2 ? '@wide.example' : `.${tag}@wide.example` } }));
      const res = await wide.api.post('/deals/query', { filter: { $or: broad } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ code: 'too_many_matches', field: expect.stringMatching(/^filter\.\$or\.\d+$/) })]);
      // Fewer of them are answered.
      const few = await wide.api.post('/deals/query', { filter: { $or: broad.slice(0, 5) }, limit: 200 });
      expect(few.status).toBe(200);
      expect(few.body.data).toHaveLength(200);
    });
  });

  describe('rules', () => {
    it('matches a deal with no contact, or whose contact was deleted, exactly where a join would', async () => {
      const kept = await contact({ first_name: 'Kept' });
      const gone = await contact({ first_name: 'Gone' });
      const withKept = await deal({ contact_id: kept.id, value: 1 });
      const withGone = await deal({ contact_id: gone.id, value: 1 });
      const without = await deal({ value: 1 });
      expect((await stack.api.delete(`/contacts/${gone.id}`)).status).toBe(204);
      const mine = { id: { $in: [withKept.id, withGone.id, without.id] } };
      const ids = async (filter: Expr) => (await queryAll('deals', { filter: { $and: [mine, filter] } })).map((d) => d.id).sort();
      expect(await ids({ 'contact.first_name': 'Kept' })).toEqual([withKept.id]);
      expect(await ids({ 'contact.first_name': { $ne: 'Kept' } })).toEqual([withGone.id, without.id].sort());
      expect(await ids({ 'contact.first_name': null })).toEqual([withGone.id, without.id].sort());
      expect(await ids({ $not: { 'contact.first_name': 'Kept' } })).toEqual([withGone.id, without.id].sort());
      expect(await ids({ 'contact.first_name': { $exists: true } })).toEqual([withKept.id]);
    });

    it('sees a contact written just before the query, with no index lag', async () => {
      const c = await contact({ first_name: `Fresh${tag}` });
      const d = await deal({ contact_id: c.id });
      const found = await queryAll('deals', { filter: { 'contact.first_name': `Fresh${tag}` } });
      expect(found.map((x) => x.id)).toEqual([d.id]);
    });

    it('returns the related paths asked for, nested, and null where there is no related record', async () => {
      const company = await create('/companies', { name: 'Nested Co', domain: `nested-${tag}.example` });
      const owner = await create('/users', { name: 'Nested Owner', email: `nested.${tag}@example.com` });
      const c = await contact({ first_name: 'Nested', company_id: company.id });
      const full = await deal({ contact_id: c.id, company_id: company.id, owner_id: owner.id, value: 42 });
      const bare = await deal({ value: 43 });
      const res = await stack.api.post('/deals/query', {
        filter: { id: { $in: [full.id, bare.id] } },
        sort: [{ field: 'value' }],
        fields: ['value', 'contact.email', 'contact.first_name', 'company.domain', 'owner.name'],
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([
        {
          id: full.id,
          value: 42,
          contact: { email: c.email, first_name: 'Nested' },
          company: { domain: `nested-${tag}.example` },
          owner: { name: 'Nested Owner' },
        },
        { id: bare.id, value: 43, contact: null, company: null, owner: null },
      ]);
    });

    it('reaches a task’s and an activity’s deal from the contacts service', async () => {
      const big = await deal({ name: `Big ${tag}`, value: 90_000 });
      const small = await deal({ name: `Small ${tag}`, value: 10 });
      const tasks = [
        await create('/tasks', { title: 'on big', deal_id: big.id }),
        await create('/tasks', { title: 'on small', deal_id: small.id }),
        await create('/tasks', { title: 'no deal' }),
      ];
      const mine = { id: { $in: tasks.map((t) => t.id) } };
      const res = await stack.api.post('/tasks/query', { filter: { ...mine, 'deal.value': { $gte: 50_000 } }, fields: ['title', 'deal.name'] });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([{ id: tasks[0].id, title: 'on big', deal: { name: `Big ${tag}` } }]);
      const without = await queryAll('tasks', { filter: { ...mine, 'deal.name': null }, fields: ['deal.name'] });
      expect(without).toEqual([{ id: tasks[2].id, deal: null }]);
      const activity = await create('/activities', { type: 'call', subject: 'about big', deal_id: big.id });
      const activities = await queryAll('activities', { filter: { id: activity.id, 'deal.name': { $starts_with: 'big ' } } });
      expect(activities.map((a) => a.id)).toEqual([activity.id]);
    });

    it('asks only about the records the rest of the filter can reach, and answers a 400 that says how to narrow it otherwise', async () => {
      const common = `Many${tag}`;
      const many: Array<{ id: string }> = [];
      for (let i = 0; i <= RELATED_IDS_MAX; i++) many.push(await deal({ value: 7, contact_id: (await contact({ first_name: common })).id }));
      // More deals reference such contacts than may be sent, and more contacts match than may be answered.
      const broad = await stack.api.post('/deals/query', { filter: { $or: [{ value: -1 }, { 'contact.first_name': common }] } });
      expect(broad.status).toBe(400);
      expect(broad.body.error.code).toBe('validation_failed');
      expect(broad.body.error.details).toEqual([expect.objectContaining({ field: 'filter.$or.1', code: 'too_many_matches' })]);
      expect(broad.body.error.details[0].message).toMatch(/more selective/);
      // A condition ANDed at the top narrows which contacts are asked about: the same condition is answered.
      const some = many.slice(0, 3).map((d) => d.id);
      const narrowed = await queryAll('deals', { filter: { id: { $in: some }, $or: [{ value: -1 }, { 'contact.first_name': common }] } });
      expect(narrowed.map((d) => d.id).sort()).toEqual([...some].sort());
      // So does a more selective condition on the contact itself.
      const first = (await stack.api.get(`/deals/${many[0].id}`)).body.data;
      const exact = await queryAll('deals', { filter: { $or: [{ value: -1 }, { 'contact.first_name': common, 'contact.id': first.contact_id }] } });
      expect(exact.map((d) => d.id)).toEqual([many[0].id]);
    });

    it('ends a page early, with a cursor, rather than let large values outgrow one message, here or in the other service', async () => {
      // Six text fields of 9,900 characters: about 60 KB a contact, so twenty outgrow one NATS message (1 MB).
      const names = ['bio0', 'bio1', 'bio2', 'bio3', 'bio4', 'bio5'];
      for (const name of names) expect((await stack.api.post('/objects/contacts/fields', { name, type: 'string' })).status).toBe(201);
      const made: Array<{ deal: string; contact: string; bio: string }> = [];
      for (let i = 0; i < 20; i++) {
        const bio = `${i}:`.padEnd(9_900, 'x');
        const c = await contact({ custom_fields: Object.fromEntries(names.map((name) => [name, bio])) });
        made.push({ deal: (await deal({ contact_id: c.id, value: 11 })).id, contact: c.id, bio });
      }
      const pages = async (object: string, body: Record<string, unknown>) => {
        const sizes: number[] = [];
        const items: any[] = [];
        let cursor: string | undefined;
        do {
          const res = await stack.api.post(`/${object}/query`, { ...body, ...(cursor ? { cursor } : {}) });
          expect(res.status).toBe(200);
          sizes.push(res.body.data.length);
          items.push(...res.body.data);
          cursor = res.body.has_more ? res.body.next_cursor : undefined;
        } while (cursor);
        return { sizes, items };
      };
      const across = await pages('deals', { filter: { id: { $in: made.map((m) => m.deal) } }, fields: ['contact.custom_fields'], limit: 50 });
      expect(across.sizes.length).toBeGreaterThan(1);
      expect(across.items.map((d) => d.id).sort()).toEqual(made.map((m) => m.deal).sort());
      for (const m of made) expect(across.items.find((d) => d.id === m.deal).contact.custom_fields.bio5).toBe(m.bio);
      const here = await pages('contacts', { filter: { id: { $in: made.map((m) => m.contact) } }, fields: ['custom_fields'], limit: 50 });
      expect(here.sizes.length).toBeGreaterThan(1);
      expect(here.items.map((c) => c.custom_fields.bio0).sort()).toEqual(made.map((m) => m.bio).sort());
    });

    it('names unknown related paths, misfit operators and sorts across services at their place in the request', async () => {
      const res = await stack.api.post('/deals/query', {
        filter: { $or: [{ 'contact.nope': 1 }, { 'owner.name': { $gt: 3 } }, { 'contact.company.name': 'x' }] },
        sort: [{ field: 'contact.email' }],
      });
      expect(res.status).toBe(400);
      const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
      expect(fields).toEqual(['filter.$or.0.contact.nope', 'filter.$or.1.owner.name.$gt', 'filter.$or.2.contact.company.name', 'sort.0.field'].sort());
      const unknown = res.body.error.details.find((d: { field: string }) => d.field === 'filter.$or.0.contact.nope');
      expect(unknown.message).toContain('contact.email');
      const picked = await stack.api.post('/deals/query', { fields: ['contact.nope'] });
      expect(picked.status).toBe(400);
      expect(picked.body.error.details.map((d: { field: string }) => d.field)).toEqual(['fields.0']);
    });
  });
});
