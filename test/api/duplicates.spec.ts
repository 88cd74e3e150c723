import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

const token = () =>
  `z${randomBytes(5)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;
const digits = () => String(200 + Math.floor(Math.random() * 700)) + String(Math.floor(1_000_000 + Math.random() * 8_999_999));

interface Duplicate {
  id: string;
  score: number;
  reasons: Array<{ field: string; rule: string; similarity?: number }>;
}

/** Duplicate detection (docs/search.md): each rule with its reason and weight, and what must not match. */
describe('duplicates of contacts and companies', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack?.stop());

  const create = async (path: string, body: unknown) => {
    const res = await stack.api.post(path, body);
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const list = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<Duplicate[]> => {
    const res = await stack.api.request(method, path, body);
    expect(res.status).toBe(200);
    return res.body.data;
  };

  it('finds the same email after normalisation (case and +tag), never the record itself', async () => {
    const local = token();
    const domain = `${token()}.com`;
    const original = await create('/contacts', { email: `${local}@${domain}` });
    const tagged = await create('/contacts', { email: `${local.toUpperCase()}+news@${domain}` });
    await create('/contacts', { email: `${local}x@${domain}` });
    expect(await list('GET', `/contacts/${original.id}/duplicates`)).toEqual([
      // Prior -3, the same email +6, the same company email domain +1.5: 1 / (1 + e^-4.5).
      { id: tagged.id, score: 0.989, reasons: [{ field: 'email', rule: 'same_normalized_email' }] },
    ]);
    expect((await list('POST', '/contacts/duplicates', { email: `${local}+x@${domain}` })).map((d) => d.id).sort()).toEqual([original.id, tagged.id].sort());
  });

  it('finds the same phone number with or without the country code, in any format', async () => {
    const number = digits();
    const a = await create('/contacts', { email: `${token()}@example.com`, phone: `+1 ${number}` });
    const b = await create('/contacts', { email: `${token()}@example.com`, phone: `(${number.slice(0, 3)}) ${number.slice(3, 6)}-${number.slice(6)}` });
    await create('/contacts', { email: `${token()}@example.com`, phone: `+1 ${number.slice(0, 9)}${(Number(number[9]) + 1) % 10}` });
    // Prior -3, a phone two records share +4, the same email domain (example.com is no mailbox provider) +1.5.
    expect(await list('GET', `/contacts/${a.id}/duplicates`)).toEqual([{ id: b.id, score: 0.9241, reasons: [{ field: 'phone', rule: 'same_phone' }] }]);
  });

  it('finds a similar name only together with the same company or the same email domain; more rules score higher', async () => {
    const last = token();
    const domain = `${token()}.com`;
    const company = await create('/companies', { name: `Co ${token()}` });
    const sameCompany = await create('/contacts', { email: `${token()}@example.com`, first_name: 'Ada', last_name: last, company_id: company.id });
    const sameDomain = await create('/contacts', { email: `a.${token()}@${domain}`, first_name: 'Ada', last_name: last });
    await create('/contacts', { email: `${token()}@example.org`, first_name: 'Ada', last_name: last });
    const found = await list('POST', '/contacts/duplicates', { email: `ada@${domain}`, first_name: 'Ada', last_name: `${last}s`, company_id: company.id });
    expect(found.map((d) => d.id).sort()).toEqual([sameCompany.id, sameDomain.id].sort());
    for (const d of found) {
      expect(d.reasons).toEqual([{ field: 'name', rule: 'similar_name', similarity: expect.any(Number) }]);
      expect(d.reasons[0].similarity).toBeGreaterThanOrEqual(0.9);
      // Prior -3, the same first name +1.5, a surname one typo away +1.5, the same company or domain +1.5.
      expect(d.score).toBe(0.8176);
    }
    // A shared mailbox provider's domain says nothing about the company.
    await create('/contacts', { email: `${token()}@gmail.com`, first_name: 'Ada', last_name: last });
    expect(await list('POST', '/contacts/duplicates', { email: `ada.${token()}@gmail.com`, first_name: 'Ada', last_name: last })).toEqual([]);
    // Email and name together.
    const both = await list('POST', '/contacts/duplicates?min_score=0.9', { email: sameDomain.email, first_name: 'Ada', last_name: last });
    expect(both).toEqual([
      { id: sameDomain.id, score: expect.any(Number), reasons: expect.arrayContaining([{ field: 'email', rule: 'same_normalized_email' }]) },
    ]);
    expect(both[0].score).toBeGreaterThan(0.95);
    expect(both[0].reasons).toHaveLength(2);
  });

  it('finds companies by registrable domain and by a similar name; min_score filters', async () => {
    const word = token();
    const a = await create('/companies', { name: `${word} Corporation`, domain: `${word}.com` });
    const b = await create('/companies', { name: `Other ${token()}`, domain: `www.${word}.com` });
    const c = await create('/companies', { name: `${word} Corporation.` });
    const found = await list('GET', `/companies/${a.id}/duplicates`);
    expect(found.map((d) => d.id)).toEqual([b.id, c.id]);
    // Prior -1.5, the same domain +6, another name -2.
    expect(found[0]).toEqual({ id: b.id, score: 0.9241, reasons: [{ field: 'domain', rule: 'same_domain' }] });
    expect(found[1].reasons).toEqual([{ field: 'name', rule: 'similar_name', similarity: 1 }]);
    // Prior -1.5, the same name without its legal form +3.
    expect(found[1].score).toBe(0.8176);
    expect((await list('GET', `/companies/${a.id}/duplicates?min_score=0.85`)).map((d) => d.id)).toEqual([b.id]);
    expect((await list('POST', '/companies/duplicates', { domain: `WWW.${word.toUpperCase()}.com` })).map((d) => d.id).sort()).toEqual([a.id, b.id].sort());
    expect(await list('POST', '/companies/duplicates', { name: `Unrelated ${token()}` })).toEqual([]);
  });

  it('finds a company two typos away among sixty names closer to it by trigrams but three letters off', async () => {
    const stem = token();
    const original = await create('/companies', { name: `${stem} Labs` });
    // Two typos in the stem: its third and fourth letters swapped, its seventh changed.
    const letters = [...stem];
    [letters[2], letters[3]] = [letters[3], letters[2]];
    letters[6] = letters[6] === 'q' ? 'w' : 'q';
    const typo = await create('/companies', { name: `${letters.join('')} Labs, Inc.` });
    // Three letters more: every trigram of the stem and more of them shared, but not within its typos.
    const alphabet = 'abcdefghijklmnopqrstuvwxyz';
    for (let i = 0; i < 60; i++) await create('/companies', { name: `${stem}${alphabet[i % 26]}${alphabet[Math.floor(i / 26)]}x Labs` });
    const found = await list('GET', `/companies/${original.id}/duplicates`);
    expect(found.map((d) => d.id)).toEqual([typo.id]);
    expect(found[0].reasons).toEqual([{ field: 'name', rule: 'similar_name', similarity: expect.any(Number) }]);
    expect((await list('POST', '/companies/duplicates', { name: `${stem.toUpperCase()} LABS GmbH` })).map((d) => d.id).sort()).toEqual(
      [original.id, typo.id].sort(),
    );
  });

  it('takes www. and case off a domain but not a subdomain: mail.acme.com is not acme.com', async () => {
    const word = token();
    const a = await create('/companies', { name: `First ${token()}`, domain: `${word}.com` });
    const same = await create('/companies', { name: `Second ${token()}`, domain: `WWW.${word.toUpperCase()}.com` });
    await create('/companies', { name: `Third ${token()}`, domain: `mail.${word}.com` });
    await create('/companies', { name: `Fourth ${token()}`, domain: `${word}.co.uk` });
    expect(await list('GET', `/companies/${a.id}/duplicates`)).toEqual([{ id: same.id, score: 0.9241, reasons: [{ field: 'domain', rule: 'same_domain' }] }]);
  });

  it('finds the typos people make, nicknames, swapped names and Gmail dots, and not a family sharing a phone', async () => {
    const company = await create('/companies', { name: `Co ${token()}` });
    const at = (first: string, last: string, extra: object = {}) =>
      create('/contacts', { email: `${token()}@example.org`, first_name: first, last_name: last, company_id: company.id, ...extra });
    const ids = async (id: string) => (await list('GET', `/contacts/${id}/duplicates`)).map((d) => d.id).sort();
    // Two letters swapped in a surname, at the same company: trigram similarity 0.6, on the old threshold.
    const fazoduma = await at('Fegamum', 'Fazoduma');
    const swapped = await at('Fegamum', 'Faozduma');
    expect(await ids(fazoduma.id)).toEqual([swapped.id]);
    // A nickname, and first and last name the other way round.
    const robert = await at('Robert', 'Okonkwo');
    const bob = await at('Bob', 'Okonkwo');
    const crossed = await at('Okonkwo', 'Robert');
    expect(await ids(robert.id)).toEqual([bob.id, crossed.id].sort());
    // Gmail ignores dots: one mailbox, whatever the company.
    const local = token();
    const gmail = await create('/contacts', { email: `${local.slice(0, 3)}.${local.slice(3)}@gmail.com` });
    const plain = await create('/contacts', { email: `${local}@googlemail.com` });
    expect(await ids(gmail.id)).toEqual([plain.id]);
    // A family: one surname and home phone, other first names.
    const phone = `+44 20 7946 ${digits().slice(-4)}`;
    const parent = await create('/contacts', { email: `${token()}@gmail.com`, first_name: 'Margaret', last_name: 'Adeyemi', phone });
    await create('/contacts', { email: `${token()}@outlook.com`, first_name: 'Kwame', last_name: 'Adeyemi', phone: `020 7946 ${phone.slice(-4)}` });
    expect(await ids(parent.id)).toEqual([]);
    // Companies: a transposition in a short stem (trigram similarity 0.56), and a legal form.
    const stem = `Sati${token().slice(1, 5)}`;
    const labs = await create('/companies', { name: `${stem} Labs` });
    const typo = await create('/companies', { name: `${stem.slice(0, 3)}${stem[4]}${stem[3]}${stem.slice(5)} Labs GmbH` });
    await create('/companies', { name: `${stem} Foods` });
    expect((await list('GET', `/companies/${labs.id}/duplicates`)).map((d) => d.id)).toEqual([typo.id]);
  });

  it('pages through every duplicate with no repeats and no gaps; the last page has no next_cursor', async () => {
    const local = token();
    const domain = `${token()}.com`;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create('/contacts', { email: `${local}+${i}@${domain}` })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await stack.api.post(`/contacts/duplicates?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { email: `${local}@${domain}` });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((d: Duplicate) => d.id));
      if (!res.body.has_more) expect(res.body).not.toHaveProperty('next_cursor');
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...made].sort());
  });

  it('answers 404 for an unknown record and 400 for bad input', async () => {
    expect((await stack.api.get('/contacts/cont_01aaaaaaaaaaaaaaaaaaaaaaaa/duplicates')).status).toBe(404);
    expect((await stack.api.get('/companies/comp_01aaaaaaaaaaaaaaaaaaaaaaaa/duplicates')).status).toBe(404);
    const refusal = (res: { status: number; body: any }) => ({
      status: res.status,
      details: res.body.error?.details?.map((d: { field: string; code: string }) => [d.field, d.code]),
    });
    expect(refusal(await stack.api.post('/contacts/duplicates', {}))).toEqual({ status: 400, details: [['body', 'missing_field']] });
    expect(refusal(await stack.api.post('/contacts/duplicates', { email: 'not an email' }))).toEqual({ status: 400, details: [['email', 'invalid_value']] });
    expect(refusal(await stack.api.post('/companies/duplicates', { nope: 1 }))).toEqual({ status: 400, details: [['nope', 'unknown_field']] });
    for (const [q, field, code] of [
      ['min_score=2', 'min_score', 'invalid_value'],
      ['min_score=-1', 'min_score', 'invalid_value'],
      ['min_score=x', 'min_score', 'invalid_value'],
      ['limit=0', 'limit', 'invalid_value'],
      ['limit=101', 'limit', 'invalid_value'],
      ['cursor=abc', 'cursor', 'invalid_cursor'],
    ]) {
      const res = await stack.api.post(`/companies/duplicates?${q}`, { name: 'x' });
      expect({ q, ...refusal(res) }).toEqual({ q, status: 400, details: [[field, code]] });
    }
  });
});
