import { randomBytes } from 'crypto';
import fc from 'fast-check';
import { contactsQueryHelpers, Direction, SortKey, startContactsQueryStack } from '../support/contacts-query';
import { Expr, holds, isOperators, Kind, normalise, Row, Value } from '../support/query-model';
import { TestStack } from '../support/stack';
import { propertyRuns } from '../support/property-seeds';

/**
 * POST /contacts/query: a filter tree with MongoDB's null semantics, a sort on any scalar path, a choice of
 * fields and keyset paging. A model of the same filter and sort, evaluated here over the contacts the test
 * made, is the reference for random queries; the deterministic cases pin each rule on its own.
 */

const SEED = 20261124;
const RUNS = 40;
const PAGE = 7;

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

describe('Querying contacts (POST /contacts/query)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startContactsQueryStack();
  });
  afterAll(() => stack.stop());
  const { query, pagesOf, newOwner, newCompany, createContact } = contactsQueryHelpers(() => stack);

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
    });

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
      for (const { seed, numRuns } of propertyRuns(SEED, RUNS)) {
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
          { seed, numRuns, endOnFailure: true },
        );
      }
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
});
