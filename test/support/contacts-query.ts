import { ApiResponse } from './api-client';
import { Expr } from './query-model';
import { startStack, TestStack } from './stack';

/**
 * What the POST /contacts/query suites (test/api/query*.spec.ts) share: a contacts stack with the custom
 * fields they filter on, and helpers over it that make contacts, page through answers and check refusals.
 */
export type Direction = 'asc' | 'desc';
export type SortKey = { field: string; direction: Direction };

export const sortedCopy = <T>(xs: T[]) => [...xs].sort();

/** A contacts service with the custom fields score2 (number), nickname (string) and vip (boolean), and no rate limit to speak of. */
export async function startContactsQueryStack(): Promise<TestStack> {
  // The random queries alone send several hundred requests.
  const stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
  for (const field of [
    { name: 'score2', type: 'number' },
    { name: 'nickname', type: 'string' },
    { name: 'vip', type: 'boolean' },
  ]) {
    const res = await stack.api.post('/objects/contacts/fields', field);
    if (res.status !== 201) throw new Error(`POST /objects/contacts/fields answered ${res.status}: ${res.text}`);
  }
  return stack;
}

/** Helpers over the stack `stack()` answers once the suite's beforeAll started it. */
export function contactsQueryHelpers(stack: () => TestStack) {
  let seq = 0;
  const email = (label = 'q') => `${label}.${Date.now()}.${++seq}@example.com`;

  const query = (body: unknown, key?: string) => stack().api.post('/contacts/query', body, key ? { key } : {});

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
    const res = await stack().api.post('/users', { name, email: email('owner') });
    expect(res.status).toBe(201);
    return res.body.data;
  }
  async function newCompany(name: string, domain?: string): Promise<{ id: string; name: string; domain: string | null }> {
    const res = await stack().api.post('/companies', { name, ...(domain ? { domain } : {}) });
    expect(res.status).toBe(201);
    return res.body.data;
  }
  async function createContact(fields: Record<string, unknown>): Promise<{ id: string; email: string }> {
    const res = await stack().api.post('/contacts', { email: email(), ...fields });
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

  return { email, query, pagesOf, queryAll, newOwner, newCompany, createContact, scoped, fixture, expectInvalid, underFilter, expectBadCursor };
}
