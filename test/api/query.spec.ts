import { randomBytes } from 'crypto';
import fc from 'fast-check';
import { ApiResponse } from '../support/api-client';
import { Expr, holds, isOperators, Kind, normalise, Row, Value } from '../support/query-model';
import { startStack, TestStack } from '../support/stack';

/**
 * POST /contacts/query: a filter tree with MongoDB's null semantics, a sort on any scalar path, a choice of
 * fields and keyset paging. A model of the same filter and sort, evaluated here over the contacts the test
 * made, is the reference for random queries; the deterministic cases pin each rule on its own.
 */
const SEED = 20261124;
const RUNS = 40;
const PAGE = 7;

type Direction = 'asc' | 'desc';
type SortKey = { field: string; direction: Direction };

const STAGES = ['lead', 'prospect', 'customer', 'churned'];
const SOURCES = ['organic', 'referral', 'paid', 'social', 'email', 'event', 'outbound', 'other'];

/** The paths the model knows, with how values of each compare. */
const KIND: Record<string, Kind> = {
  id: 'id',
  email: 'string',
  first_name: 'string',
  last_name: 'string',
  stage: 'enum',
  source: 'enum',
  company_id: 'id',
  owner_id: 'id',
  icp_score: 'number',
  icp_scored_at: 'datetime',
  'custom_fields.score2': 'number',
  'custom_fields.nickname': 'string',
  'company.name': 'string',
  'company.domain': 'string',
  'owner.email': 'string',
  'owner.name': 'string',
};

/**
 * Why b may not follow a under `sort`, or undefined when it may. Nulls come last ascending and first
 * descending; rows equal on every key follow in id order. Text (strings, enums, ids) orders as the
 * database's collation puts it, which the service sorts by: `textRank` is each text's place in that order.
 */
function outOfOrder(a: Row, b: Row, sort: SortKey[], textRank: (text: string) => number): string | undefined {
  const ordered = (kind: Kind, x: Value, y: Value) =>
    kind === 'number' || kind === 'datetime' ? [x as number, y as number] : [textRank(x as string), textRank(y as string)];
  for (const { field, direction } of sort) {
    const kind = KIND[field];
    const x = normalise(kind, a[field]);
    const y = normalise(kind, b[field]);
    if (x === null && y === null) continue;
    const desc = direction === 'desc';
    const why = `${a.id} (${field}=${String(a[field])}) before ${b.id} (${field}=${String(b[field])}) under ${direction}`;
    if (x === null || y === null) return (desc ? x === null : y === null) ? undefined : why;
    if (x === y) continue;
    const [rx, ry] = ordered(kind, x, y);
    return (desc ? rx > ry : rx < ry) ? undefined : why;
  }
  return textRank(a.id) < textRank(b.id) ? undefined : `${a.id} before ${b.id}, equal on every sort key`;
}

function countConditions(expr: Expr): number {
  return Object.entries(expr).reduce((n, [key, value]) => {
    if (key === '$and' || key === '$or') return n + (value as Expr[]).reduce((m, e) => m + countConditions(e), 0);
    if (key === '$not') return n + countConditions(value as Expr);
    return n + (isOperators(value) ? Object.keys(value).length : 1);
  }, 0);
}

const sortedCopy = <T>(xs: T[]) => [...xs].sort();

describe('Querying contacts (POST /contacts/query)', () => {
  let stack: TestStack;
  let seq = 0;
  const email = (label = 'q') => `${label}.${Date.now()}.${++seq}@example.com`;

  beforeAll(async () => {
    // The random queries alone send several hundred requests.
    stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
    for (const field of [
      { name: 'score2', type: 'number' },
      { name: 'nickname', type: 'string' },
      { name: 'vip', type: 'boolean' },
    ]) {
      const res = await stack.api.post('/objects/contacts/fields', field);
      if (res.status !== 201) throw new Error(`POST /objects/contacts/fields answered ${res.status}: ${res.text}`);
    }
  });
  afterAll(() => stack.stop());

  const query = (body: unknown, key?: string) => stack.api.post('/contacts/query', body, key ? { key } : {});

  /** Every item of the query, following next_cursor; each page is checked for the paging contract. */
  async function pagesOf(body: Record<string, unknown>): Promise<any[][]> {
    const pages: any[][] = [];
    let cursor: string | undefined;
    do {
      const res = await query({ ...body, ...(cursor === undefined ? {} : { cursor }) });
      if (res.status !== 200) throw new Error(`POST /contacts/query ${JSON.stringify(body)} answered ${res.status}: ${res.text}`);
      const { data, has_more, next_cursor } = res.body;
      expect(data.length).toBeLessThanOrEqual((body.limit as number | undefined) ?? 50);
      if (has_more) {
        expect(typeof next_cursor).toBe('string');
        // A page that ends early still has to move the cursor forward.
        expect(data.length).toBeGreaterThan(0);
      } else {
        expect(res.body).not.toHaveProperty('next_cursor');
      }
      pages.push(data);
      if (pages.length > 500) throw new Error(`paging ${JSON.stringify(body)} does not end`);
      cursor = has_more ? next_cursor : undefined;
    } while (cursor !== undefined);
    return pages;
  }
  const queryAll = async (body: Record<string, unknown>) => (await pagesOf(body)).flat();

  async function newOwner(name = 'Owner'): Promise<{ id: string; name: string; email: string }> {
    const res = await stack.api.post('/users', { name, email: email('owner') });
    expect(res.status).toBe(201);
    return res.body.data;
  }
  async function newCompany(name: string, domain?: string): Promise<{ id: string; name: string; domain: string | null }> {
    const res = await stack.api.post('/companies', { name, ...(domain ? { domain } : {}) });
    expect(res.status).toBe(201);
    return res.body.data;
  }
  async function createContact(fields: Record<string, unknown>): Promise<{ id: string; email: string }> {
    const res = await stack.api.post('/contacts', { email: email(), ...fields });
    if (res.status !== 201) throw new Error(`POST /contacts answered ${res.status}: ${res.text}`);
    return res.body.data;
  }

  /** Each test queries under an owner of its own, so tests never see each other's contacts. */
  const scoped = (owner: string, filter?: Expr): Expr => (filter ? { $and: [{ owner_id: owner }, filter] } : { owner_id: owner });

  /** Named contacts under a fresh owner; `where` answers the labels a filter selects, sorted by label. */
  async function fixture(spec: Record<string, Record<string, unknown>>) {
    const owner = await newOwner();
    const labelOf = new Map<string, string>();
    const ids: Record<string, string> = {};
    for (const [label, fields] of Object.entries(spec)) {
      const contact = await createContact({ owner_id: owner.id, ...fields });
      labelOf.set(contact.id, label);
      ids[label] = contact.id;
    }
    const inOrder = async (filter?: Expr, sort?: SortKey[]) =>
      (await queryAll({ filter: scoped(owner.id, filter), ...(sort ? { sort } : {}) })).map((item) => labelOf.get(item.id) ?? `unexpected ${item.id}`);
    return { owner, ids, inOrder, where: async (filter: Expr) => sortedCopy(await inOrder(filter)) };
  }

  /** A 400 validation_failed whose details name one of `fields` (or, given a function, a field it accepts). */
  async function expectInvalid(body: unknown, fields: string | string[] | ((field: string) => boolean)): Promise<ApiResponse> {
    const res = await query(body);
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    const named: string[] = (res.body.error.details ?? []).map((d: { field: string }) => d.field);
    const accepts = typeof fields === 'function' ? fields : (f: string) => (Array.isArray(fields) ? fields : [fields]).includes(f);
    if (!named.some(accepts))
      throw new Error(
        `${JSON.stringify(body).slice(0, 300)} named ${JSON.stringify(named)}, not ${typeof fields === 'function' ? 'the expected path' : JSON.stringify(fields)}`,
      );
    return res;
  }
  const underFilter = (field: string) => field === 'filter' || field.startsWith('filter.');

  /** A cursor the query cannot continue from is a 400 that names `cursor`, as on the GET lists. */
  async function expectBadCursor(body: unknown): Promise<void> {
    const res = await query(body);
    expect(res.status).toBe(400);
    expect((res.body.error.details ?? []).map((d: { field: string }) => d.field)).toContain('cursor');
  }

  describe('random filters and sorts against a model', () => {
    const DOMAIN = '@prop.example.com';
    const SCOPE: Expr = { email: { $ends_with: DOMAIN } };
    const rows: Row[] = [];
    const companies: Array<{ id: string; name: string; domain: string | null }> = [];
    const owners: Array<{ id: string; name: string; email: string }> = [];
    const textRanks = new Map<string, number>();
    const textRank = (text: string) => {
      const rank = textRanks.get(text);
      if (rank === undefined) throw new Error(`the model has no place for ${JSON.stringify(text)} in the collation`);
      return rank;
    };

    const FIRST_NAMES = ['Ann', 'ann', 'ANNA', 'A%n', 'A_n', 'B\\ob', '100%', 'x_y', 'Zed'];
    const LAST_NAMES = ['Smith', 'smith_jones', 'O\\Brien', '50% off', 'Lee', 'lee'];
    const NICKNAMES = ['zed', 'Zed', 'z%d', 'z_d', 'z\\d', 'zd'];
    const LOCAL_PARTS = ['ann', 'a%n', 'a_n', 'x_y', '100%', 'zed'];
    const SCORES = [0, 10, 25, 50, 75, 100];
    const SCORE2 = [-1.5, 0, 2, 3.25, 40];
    const SCORED_AT = ['2030-01-01T00:00:00Z', '2030-02-01T00:00:00Z', '2030-03-15T12:30:00Z', '2031-01-01T00:00:00Z'];

    beforeAll(async () => {
      const tag = randomBytes(3).toString('hex');
      companies.push(
        await newCompany('Acme_Corp', `acme-${tag}.example`),
        await newCompany('Globex 100%', `globex-${tag}.example`),
        await newCompany('Init\\ech'),
      );
      owners.push(await newOwner('Own_er One'), await newOwner('Owner 100%'));
      const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
      const spec = fc.record({
        local: fc.constantFrom(...LOCAL_PARTS),
        first_name: nullable(fc.constantFrom(...FIRST_NAMES)),
        last_name: nullable(fc.constantFrom(...LAST_NAMES)),
        stage: nullable(fc.constantFrom(...STAGES)),
        source: nullable(fc.constantFrom(...SOURCES)),
        icp_score: nullable(fc.constantFrom(...SCORES)),
        icp_scored_at: nullable(fc.constantFrom(...SCORED_AT)),
        company_id: fc.option(fc.constantFrom(...companies.map((c) => c.id)), { nil: null, freq: 3 }),
        owner_id: fc.option(fc.constantFrom(...owners.map((o) => o.id)), { nil: null, freq: 3 }),
        score2: nullable(fc.constantFrom(...SCORE2)),
        nickname: nullable(fc.constantFrom(...NICKNAMES)),
      });
      const specs = fc.sample(spec, { seed: SEED, numRuns: 60 });
      for (const [i, s] of specs.entries()) {
        const custom: Record<string, unknown> = {};
        if (s.score2 !== null) custom.score2 = s.score2;
        if (s.nickname !== null) custom.nickname = s.nickname;
        const fields: Record<string, unknown> = { email: `${s.local}.${i}${DOMAIN}`, custom_fields: custom };
        for (const key of ['first_name', 'last_name', 'stage', 'source', 'icp_score', 'icp_scored_at', 'company_id', 'owner_id'] as const) {
          if (s[key] !== null) fields[key] = s[key];
        }
        const created = await createContact(fields);
        // The model is built from what the API stores, not from what was sent.
        const view = (await stack.api.get(`/contacts/${created.id}`)).body.data;
        const company = companies.find((c) => c.id === view.company_id) ?? null;
        const owner = owners.find((o) => o.id === view.owner_id) ?? null;
        rows.push({
          id: view.id,
          email: view.email,
          first_name: view.first_name,
          last_name: view.last_name,
          stage: view.stage,
          source: view.source,
          company_id: view.company_id,
          owner_id: view.owner_id,
          icp_score: view.icp_score,
          icp_scored_at: view.icp_scored_at,
          'custom_fields.score2': view.custom_fields.score2 ?? null,
          'custom_fields.nickname': view.custom_fields.nickname ?? null,
          'company.name': company?.name ?? null,
          'company.domain': company?.domain ?? null,
          'owner.email': owner?.email ?? null,
          'owner.name': owner?.name ?? null,
        });
      }
      // The database orders every text the rows hold, so the model follows its collation exactly, whatever it is.
      const texts = [
        ...new Set(
          rows.flatMap((r) =>
            Object.entries(r)
              .filter(([path, v]) => typeof v === 'string' && KIND[path] !== 'datetime')
              .map(([, v]) => v as string),
          ),
        ),
      ];
      const ordered: Array<{ text: string }> = await stack.services.contacts!.dataSource.query(`SELECT text FROM unnest($1::text[]) AS text ORDER BY text`, [
        texts,
      ]);
      for (const [i, { text }] of ordered.entries()) textRanks.set(text, i);
    }, 120_000);

    function arbitraries() {
      const orNull = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
      const strings = (...pools: string[][]) => fc.constantFrom(...Array.from(new Set(pools.flat())));
      const literal: Record<string, fc.Arbitrary<Value>> = {
        id: fc.constantFrom(...rows.slice(0, 8).map((r) => r.id)),
        email: fc.constantFrom(...rows.slice(0, 8).map((r) => r.email as string), `nobody${DOMAIN}`),
        first_name: strings(FIRST_NAMES, ['nobody', 'Ann%', 'A\\n']),
        last_name: strings(LAST_NAMES, ['nobody', 'Smith_']),
        stage: fc.constantFrom(...STAGES),
        source: fc.constantFrom(...SOURCES),
        company_id: fc.constantFrom(...companies.map((c) => c.id)),
        owner_id: fc.constantFrom(...owners.map((o) => o.id)),
        icp_score: fc.constantFrom(...SCORES, 30, 99),
        icp_scored_at: fc.constantFrom(...SCORED_AT, '2030-02-15T00:00:00Z', '2029-12-31T23:59:59Z'),
        'custom_fields.score2': fc.constantFrom(...SCORE2, 1, -2, 3.5),
        'custom_fields.nickname': strings(NICKNAMES, ['nobody', 'z%']),
        'company.name': strings(
          companies.map((c) => c.name),
          ['Acme'],
        ),
        'company.domain': strings(
          companies.map((c) => c.domain).filter((d): d is string => d !== null),
          ['nowhere.example'],
        ),
        'owner.email': strings(
          owners.map((o) => o.email),
          ['nobody@example.com'],
        ),
        'owner.name': strings(
          owners.map((o) => o.name),
          ['Owner'],
        ),
      };
      const swapCase = (text: string) => Array.from(text, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
      /** A piece of a value the path holds, often in the other case, or a character LIKE would treat as a wildcard. */
      const fragment = (path: string, op: string): fc.Arbitrary<string> =>
        fc.oneof(
          { weight: 1, arbitrary: fc.constantFrom('%', '_', '\\', 'n%', 'A_', '\\O') },
          {
            weight: 4,
            arbitrary: fc
              .tuple(literal[path] as fc.Arbitrary<string>, fc.nat(), fc.integer({ min: 1, max: 4 }), fc.boolean())
              .map(([text, at, length, flip]) => {
                const from = op === '$starts_with' ? 0 : op === '$ends_with' ? Math.max(0, text.length - length) : at % text.length;
                const part = text.slice(from, from + length);
                return flip ? swapCase(part) : part;
              }),
          },
        );

      const operators = (path: string): fc.Arbitrary<[string, unknown]> => {
        const kind = KIND[path];
        const lit = literal[path];
        const list = fc.array(orNull(lit), { minLength: 1, maxLength: 4 });
        const choices: fc.WeightedArbitrary<[string, unknown]>[] = [
          { weight: 1, arbitrary: fc.tuple(fc.constantFrom('$eq', '$ne'), orNull(lit)) },
          { weight: 1, arbitrary: fc.tuple(fc.constantFrom('$in', '$nin'), list) },
          { weight: 1, arbitrary: fc.tuple(fc.constant('$exists'), fc.boolean()) },
        ];
        if (kind === 'number' || kind === 'datetime') choices.push({ weight: 2, arbitrary: fc.tuple(fc.constantFrom('$gt', '$gte', '$lt', '$lte'), lit) });
        if (kind === 'string') {
          const text = fc.constantFrom('$contains', '$starts_with', '$ends_with').chain((op) => fragment(path, op).map((f) => [op, f] as [string, unknown]));
          choices.push({ weight: 3, arbitrary: text });
        }
        return fc.oneof(...choices);
      };
      const condition = (path: string): fc.Arbitrary<unknown> =>
        fc.oneof(
          orNull(literal[path]),
          fc.uniqueArray(operators(path), { minLength: 1, maxLength: 2, selector: ([op]) => op }).map((ops) => Object.fromEntries(ops)),
        );
      const paths = Object.keys(KIND);
      const entry = fc.constantFrom(...paths).chain((path) => condition(path).map((c) => [path, c] as [string, unknown]));
      const leaf: fc.Arbitrary<Expr> = fc.oneof(
        { weight: 3, arbitrary: entry.map((e) => Object.fromEntries([e])) },
        {
          weight: 1,
          arbitrary: fc.uniqueArray(entry, { minLength: 2, maxLength: 2, selector: ([path]) => path }).map((entries) => Object.fromEntries(entries)),
        },
      );
      const expr = (depth: number): fc.Arbitrary<Expr> =>
        depth === 0
          ? leaf
          : fc.oneof(
              { weight: 3, arbitrary: leaf },
              { weight: 1, arbitrary: fc.array(expr(depth - 1), { minLength: 1, maxLength: 3 }).map((xs) => ({ $and: xs })) },
              { weight: 2, arbitrary: fc.array(expr(depth - 1), { minLength: 1, maxLength: 3 }).map((xs) => ({ $or: xs })) },
              { weight: 1, arbitrary: expr(depth - 1).map((e) => ({ $not: e })) },
            );
      // Four levels at most, and well inside the 50-condition limit once the scope is added.
      const filter = expr(3).filter((e) => countConditions(e) <= 40);
      const sortable = ['icp_score', 'custom_fields.score2', 'icp_scored_at', 'first_name', 'last_name', 'custom_fields.nickname', 'stage', 'email', 'id'];
      const sort = fc.uniqueArray(fc.record({ field: fc.constantFrom(...sortable), direction: fc.constantFrom<Direction>('asc', 'desc') }), {
        minLength: 0,
        maxLength: 2,
        selector: (k) => k.field,
      });
      return { filter, sort };
    }

    it('serves exactly the contacts the model selects, each once across pages, in sort order', async () => {
      expect(rows).toHaveLength(60);
      const { filter, sort } = arbitraries();
      const byId = new Map(rows.map((r) => [r.id, r]));
      await fc.assert(
        fc.asyncProperty(filter, sort, async (tree, keys) => {
          const body = { filter: { $and: [SCOPE, tree] }, ...(keys.length ? { sort: keys } : {}), limit: PAGE };
          const served = (await pagesOf(body)).flat().map((item) => item.id as string);
          const expected = rows.filter((r) => holds(r, tree, (path) => KIND[path])).map((r) => r.id);
          const where = `for ${JSON.stringify(body)}`;
          if (new Set(served).size !== served.length) throw new Error(`a contact was served twice ${where}: ${served.join(', ')}`);
          const missing = expected.filter((id) => !served.includes(id));
          const extra = served.filter((id) => !expected.includes(id));
          if (missing.length || extra.length) throw new Error(`missing ${JSON.stringify(missing)}, extra ${JSON.stringify(extra)} ${where}`);
          for (let i = 1; i < served.length; i++) {
            const why = outOfOrder(byId.get(served[i - 1])!, byId.get(served[i])!, keys, textRank);
            if (why) throw new Error(`out of order at ${i}: ${why} ${where}`);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }, 180_000);

    it('answers 50 items by default and at most the limit asked for', async () => {
      const res = await query({ filter: SCOPE });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(50);
      expect(res.body.has_more).toBe(true);
      expect(typeof res.body.next_cursor).toBe('string');
      const full = await query({ filter: SCOPE, limit: 200 });
      expect(full.body.data).toHaveLength(60);
      expect(full.body.has_more).toBe(false);
      const none = await query({ filter: { $and: [SCOPE, { email: `nobody${DOMAIN}` }] } });
      expect(none.body).toEqual({ data: [], has_more: false });
    });
  });

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
