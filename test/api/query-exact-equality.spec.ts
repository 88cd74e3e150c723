import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');
const swapCase = (text: string) => Array.from(text, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');

/**
 * Emails and domains are indexed on lower(), and equality on them also tests lower() so that index serves
 * it; the answer stays that of exact, case-sensitive equality (docs/query.md, Indexes).
 */
describe('Query equality on emails and domains', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  async function ids(object: string, filter: unknown): Promise<string[]> {
    const res = await stack.api.post(`/${object}/query`, { filter, fields: ['id'], limit: 200 });
    if (res.status !== 200) throw new Error(`POST /${object}/query answered ${res.status}: ${res.text}`);
    return res.body.data.map((item: { id: string }) => item.id).sort();
  }

  /** What an exact comparison of `path` with `stored` and with the same text in other cases must answer. */
  async function expectExact(object: string, path: string, stored: string, id: string): Promise<void> {
    const others = [...new Set([swapCase(stored), stored.toLowerCase(), stored.toUpperCase()])].filter((v) => v !== stored);
    expect(others.length).toBeGreaterThan(0);
    expect(await ids(object, { [path]: stored })).toEqual([id]);
    expect(await ids(object, { [path]: { $eq: stored } })).toEqual([id]);
    expect(await ids(object, { [path]: { $in: [stored, `nobody-${tag()}.example`] } })).toEqual([id]);
    for (const other of others) {
      expect(await ids(object, { [path]: other })).toEqual([]);
      expect(await ids(object, { [path]: { $eq: other } })).toEqual([]);
      expect(await ids(object, { [path]: { $in: [other] } })).toEqual([]);
      // The complement is exact too: a record whose value differs only in case is not equal to it.
      expect(await ids(object, { $and: [{ [path]: { $ne: other } }, { id }] })).toEqual([id]);
      expect(await ids(object, { $and: [{ [path]: { $nin: [other] } }, { id }] })).toEqual([id]);
    }
  }

  it("matches a contact's email only in its exact case", async () => {
    const res = await stack.api.post('/contacts', { email: `Ada.Lovelace-${tag()}@Example.COM` });
    expect(res.status).toBe(201);
    await expectExact('contacts', 'email', res.body.data.email, res.body.data.id);
  });

  it("matches a company's domain only in its exact case, on companies and through a contact's company", async () => {
    const company = await stack.api.post('/companies', { name: 'Analytical Engines', domain: `Engines-${tag()}.Example.io` });
    expect(company.status).toBe(201);
    const { id, domain } = company.body.data;
    await expectExact('companies', 'domain', domain, id);

    const contact = await stack.api.post('/contacts', { email: `works-${tag()}@example.com`, company_id: id });
    expect(contact.status).toBe(201);
    await expectExact('contacts', 'company.domain', domain, contact.body.data.id);
  });

  it("matches a user's email only in its exact case", async () => {
    const res = await stack.api.post('/users', { name: 'Grace', email: `Grace.Hopper-${tag()}@Navy.example` });
    expect(res.status).toBe(201);
    await expectExact('users', 'email', res.body.data.email, res.body.data.id);
  });
});
