import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

/** A word no other test's data contains, so each search's results are this test's own. */
const token = () =>
  `z${randomBytes(5)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;
const digits = () => String(200 + Math.floor(Math.random() * 700)) + String(Math.floor(1_000_000 + Math.random() * 8_999_999));

interface Hit {
  object: string;
  id: string;
  title: string;
  subtitle: string | null;
  score: number;
  matched: Array<{ field: string; value: string }>;
}

/** GET /search (docs/search.md): one ranked search across objects. */
describe('search across objects', () => {
  let stack: TestStack;
  let deal: { pipeline_id: string; stage_id: string };
  beforeAll(async () => {
    stack = await startStack();
    const pipeline = (await stack.api.post('/pipelines', { name: 'Search', stages: [{ name: 'Open', type: 'open' }] })).body.data;
    deal = { pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id };
  });
  afterAll(() => stack?.stop());

  const search = async (q: string, extra = ''): Promise<Hit[]> => {
    const res = await stack.api.get(`/search?q=${encodeURIComponent(q)}${extra}`);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const create = async (path: string, body: unknown) => {
    const res = await stack.api.post(path, body);
    expect(res.status).toBe(201);
    return res.body.data;
  };

  it('finds a record written just before, by word start, regardless of case and accents, exact above prefix', async () => {
    const word = token();
    const exact = await create('/companies', { name: `${word}` });
    const prefixed = await create('/companies', { name: `${word}ish Holdings` });
    const accented = await create('/contacts', { email: `${token()}@example.com`, first_name: 'Zoë', last_name: `${word}é` });
    const hits = await search(word.slice(0, 4).toUpperCase());
    expect(hits.map((h) => h.id).sort()).toEqual([exact.id, prefixed.id, accented.id].sort());
    const full = await search(word);
    expect(full[0]).toMatchObject({ object: 'companies', id: exact.id, title: word, matched: [{ field: 'name', value: word }] });
    expect(full[0].score).toBeGreaterThan(full[1].score);
    for (const hit of full) expect(hit.score > 0 && hit.score <= 1).toBe(true);
    const byAccent = await search(`zoe ${word}e`);
    expect(byAccent.map((h) => h.id)).toEqual([accented.id]);
    expect(byAccent[0].matched).toEqual([{ field: 'name', value: `Zoë ${word}é` }]);
  });

  it('tolerates one typo in words of four letters, one or two from five, an adjacent swap being one; none in shorter words', async () => {
    const word = token();
    const acme = await create('/companies', { name: 'Acme Corp' });
    const ada = await create('/contacts', { email: `${word}@example.com`, first_name: 'Ada', last_name: 'Lovelace' });
    const al = await create('/companies', { name: `Al ${word}` });
    const byAcem = await search('Acem', '&objects=companies');
    expect(byAcem[0]).toMatchObject({ id: acme.id, score: 0.45, matched: [{ field: 'name', value: 'Acme Corp' }] });
    expect(await search('Acem Corp')).toEqual([expect.objectContaining({ id: acme.id, score: 0.45 })]);
    expect((await search('Lovleace', '&objects=contacts'))[0]).toMatchObject({ id: ada.id, score: 0.45, matched: [{ field: 'name', value: 'Ada Lovelace' }] });
    expect((await search(`ada LOVLEACE`, `&objects=contacts`))[0]).toMatchObject({ id: ada.id, score: 0.45 });
    // Two typos in four letters, and any typo in a word of two, find nothing.
    expect(await search('Aqmx', '&objects=companies')).toEqual([]);
    expect(await search(`Ad ${word}`, '&objects=companies')).toEqual([]);
    expect((await search(`Al ${word}`, '&objects=companies')).map((h) => h.id)).toEqual([al.id]);
  });

  it('finds a word written a moment before by a typo, and a renamed record by its new name only', async () => {
    const word = token();
    const company = await create('/companies', { name: `${word}` });
    const typo = word.slice(0, -2) + word[word.length - 1] + word[word.length - 2];
    expect((await search(typo)).map((h) => h.id)).toEqual([company.id]);
    const renamed = token();
    expect((await stack.api.patch(`/companies/${company.id}`, { name: `${renamed} Partners` })).status).toBe(200);
    expect((await search(renamed)).map((h) => h.id)).toEqual([company.id]);
    expect(await search(word)).toEqual([]);
  });

  it('tolerates one or two typos in words of five letters or more, ranked below exact and prefix matches', async () => {
    const word = token(); // 11 letters
    const other = (c: string) => (c === 'k' ? 'm' : 'k');
    const typo1 = word.slice(0, 3) + other(word[3]) + word.slice(4, 7) + other(word[7]) + word.slice(8); // two letters changed: two typos
    const contact = await create('/contacts', { email: `${token()}@example.com`, first_name: 'Ada', last_name: word });
    const prefix = await create('/deals', { name: `${word} renewal`, value: 100, ...deal });
    const found = await search(typo1);
    expect(found.map((h) => h.id).sort()).toEqual([contact.id, prefix.id].sort());
    // Two typos in all: 0.35 (docs/search.md), the contact's name and the deal's name both of weight 1.
    for (const hit of found) expect(hit.score).toBeCloseTo(0.35, 6);
    const oneTypo = await search(word.slice(0, -1) + 'q');
    expect(oneTypo.map((h) => h.id).sort()).toEqual([contact.id, prefix.id].sort());
    expect(oneTypo[0].score).toBeGreaterThan(found[0].score);
    // A word start with a typo is neither a word start nor a word one typo away: it finds nothing.
    expect(await search(word.slice(0, 3) + 'q')).toEqual([]);
  });

  it('matches a full email, its local part and its domain; a domain finds the company and its people; names weigh more than titles', async () => {
    const local = token();
    const domain = `${token()}.com`;
    const company = await create('/companies', { name: 'Domain Test', domain });
    const person = await create('/contacts', { email: `${local}@${domain}`, first_name: 'Grace', company_id: company.id });
    const titled = await create('/contacts', { email: `${token()}@example.com`, title: `${local} lead` });
    expect((await search(`${local}@${domain}`))[0]).toMatchObject({ id: person.id, matched: [{ field: 'email', value: `${local}@${domain}` }] });
    const byLocal = await search(local);
    expect(byLocal.map((h) => h.id)).toEqual([person.id, titled.id]);
    expect(byLocal[1].matched).toEqual([{ field: 'title', value: `${local} lead` }]);
    const byDomain = await search(domain);
    expect(byDomain.map((h) => h.id)).toEqual([company.id, person.id]);
    expect(byDomain[0].matched).toEqual([{ field: 'domain', value: domain }]);
    expect((await search(`www.${domain}`))[0].id).toBe(company.id);
  });

  it('finds a phone number in any format, with or without the country code', async () => {
    const number = digits(); // ten digits
    const contact = await create('/contacts', {
      email: `${token()}@example.com`,
      phone: `+1 (${number.slice(0, 3)}) ${number.slice(3, 6)}-${number.slice(6)}`,
    });
    for (const q of [number, `${number.slice(0, 3)}.${number.slice(3, 6)}.${number.slice(6)}`, `+1${number}`, `1-${number.slice(0, 3)}-${number.slice(3)}`]) {
      const hits = await search(q);
      expect(hits.map((h) => h.id)).toEqual([contact.id]);
      expect(hits[0].matched[0].field).toBe('phone');
    }
    expect(await search(`9${number.slice(1)}`)).toEqual([]);
  });

  it('finds a phone written nationally with its trunk 0 and the same number with its country code, either way round', async () => {
    const local = digits().slice(-8); // a London number: 20, then eight digits
    const [a, b] = [`${local.slice(0, 4)} ${local.slice(4)}`, `${String((Number(local.slice(0, 4)) + 1) % 10000).padStart(4, '0')} ${local.slice(4)}`];
    const international = await create('/contacts', { email: `${token()}@example.com`, phone: `+44 20 ${a}` });
    const national = await create('/contacts', { email: `${token()}@example.com`, phone: `020 ${b}` });
    for (const [q, expected] of [
      [`020 ${a}`, international],
      [`(020) ${a.replace(' ', '-')}`, international],
      [`+44 20 ${b}`, national],
      [`0044 20 ${b}`, national],
    ] as const) {
      const hits = await search(q);
      expect(hits.map((h) => h.id)).toEqual([expected.id]);
      expect(hits[0]).toMatchObject({ score: 0.95, matched: [{ field: 'phone' }] });
    }
  });

  it('returns a record first by its exact id, with score 1', async () => {
    const user = await create('/users', { name: `Id ${token()}`, email: `${token()}@example.com` });
    const hits = await search(user.id);
    expect(hits[0]).toMatchObject({ object: 'users', id: user.id, score: 1, matched: [{ field: 'id', value: user.id }] });
  });

  it('searches activities, tasks, users and custom objects by their searchable fields only; objects narrows the set', async () => {
    const word = token();
    const slug = `s_${token()}`;
    const type = await stack.api.post('/objects', {
      name: `Searchable ${word}`,
      slug,
      fields: [
        { name: 'label', type: 'string', searchable: true },
        { name: 'secret', type: 'string' },
      ],
    });
    expect(type.status).toBe(201);
    const schema = await stack.api.get('/schema');
    const described = schema.body.data.objects.find((o: { slug: string }) => o.slug === slug);
    expect(described.fields.find((f: { name: string }) => f.name === 'label').searchable).toBe(true);
    expect(described.fields.find((f: { name: string }) => f.name === 'secret').searchable).toBeUndefined();
    const record = await create(`/objects/${slug}/records`, { values: { label: `${word} alpha`, secret: `${word} hidden` } });
    await create(`/objects/${slug}/records`, { values: { label: 'nothing', secret: `${word} hidden` } });
    const task = await create('/tasks', { title: `Call ${word}` });
    const user = await create('/users', { name: `${word} Smith`, email: `${token()}@example.com` });
    const all = await search(word);
    expect(all.map((h) => h.id).sort()).toEqual([record.id, task.id, user.id].sort());
    expect(all.find((h) => h.id === record.id)).toMatchObject({ object: slug, title: `${word} alpha`, matched: [{ field: 'label', value: `${word} alpha` }] });
    expect((await search(word, `&objects=tasks,${slug}`)).map((h) => h.object).sort()).toEqual([slug, 'tasks']);
    expect((await search(word, '&objects=deals')).length).toBe(0);
    const badType = await stack.api.post('/objects', { name: `Bad ${word}`, slug: `b_${token()}`, fields: [{ name: 'n', type: 'number', searchable: true }] });
    expect(badType.status).toBe(400);
  });

  it('pages through every match across both services in one order, with no repeats and no gaps', async () => {
    const word = token();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await create('/companies', { name: `${word} ${i}` })).id);
    for (let i = 0; i < 6; i++) made.push((await create('/deals', { name: `${word} deal ${i}`, value: 1, ...deal })).id);
    for (let i = 0; i < 4; i++) made.push((await create('/contacts', { email: `${token()}@example.com`, first_name: `${word}x` })).id);
    // Typo hits too, so that pages cross from exact and prefix hits to typo hits.
    const swap = [...word].findIndex((c, i) => i > 0 && c !== word[i + 1] && i + 1 < word.length);
    const typo = word.slice(0, swap) + word[swap + 1] + word[swap] + word.slice(swap + 2);
    for (let i = 0; i < 4; i++) made.push((await create('/companies', { name: `${typo} ${i}` })).id);
    for (let i = 0; i < 3; i++) made.push((await create('/deals', { name: `${typo} deal ${i}`, value: 1, ...deal })).id);
    const all = await search(word, '&limit=100');
    expect(all.map((h) => h.id).sort()).toEqual([...made].sort());
    // The seven records named with the swapped word are one typo away: 0.45 each (docs/search.md), all below the exact and prefix hits.
    const typoHits = all.filter((h) => h.score < 0.5);
    expect(typoHits.map((h) => h.id).sort()).toEqual(made.slice(-7).sort());
    for (const hit of typoHits) expect(hit.score).toBeCloseTo(0.45, 6);
    const seen: Hit[] = [];
    let cursor: string | undefined;
    do {
      const res = await stack.api.get(`/search?q=${word}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
      // The last page, as every list's: has_more false and no next_cursor (docs/api.md).
      if (!res.body.has_more) expect(res.body).not.toHaveProperty('next_cursor');
    } while (cursor);
    expect(seen.map((h) => h.id)).toEqual(all.map((h) => h.id));
    for (const limit of [1, 2, 5, 7]) {
      const walked: string[] = [];
      let next: string | undefined;
      do {
        const res = await stack.api.get(`/search?q=${word}&limit=${limit}${next ? `&cursor=${next}` : ''}`);
        walked.push(...res.body.data.map((h: Hit) => h.id));
        next = res.body.next_cursor;
      } while (next);
      expect(walked).toEqual(all.map((h) => h.id));
    }
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1], all[i]];
      expect(a.score > b.score || (a.score === b.score && (a.object < b.object || (a.object === b.object && a.id < b.id)))).toBe(true);
    }
  });

  it('is a read: read keys may search and list duplicates, capture-only keys may not', async () => {
    const read = (await stack.api.post('/apikeys', { name: 'r', scope: 'read' })).body.data.key;
    const capture = (await stack.api.post('/apikeys', { name: 'c', scope: 'capture-only' })).body.data.key;
    expect((await stack.api.withKey(read).get('/search?q=x')).status).toBe(200);
    expect((await stack.api.withKey(read).post('/contacts/duplicates', { email: 'a@example.com' })).status).toBe(200);
    expect((await stack.api.withKey(capture).get('/search?q=x')).status).toBe(403);
    expect((await stack.api.withKey(capture).post('/companies/duplicates', { name: 'x' })).status).toBe(403);
  });

  it('answers 400 in the error shape for a missing, empty or long q, an unknown object, a bad limit and a bad cursor', async () => {
    // Two records that q=abc finds, so its first page of one has a cursor to reuse with another q or objects.
    const word = `abc${token()}`;
    await create('/companies', { name: `Abc ${word}` });
    await create('/companies', { name: `Abc ${word} two` });
    const other = await stack.api.get(`/search?q=${word}&limit=1`);
    expect(other.body.next_cursor).toEqual(expect.any(String));
    expect((await stack.api.get(`/search?q=${word}&limit=1&cursor=${encodeURIComponent(other.body.next_cursor)}`)).status).toBe(200);
    const reused = encodeURIComponent(other.body.next_cursor);
    for (const [query, field] of [
      ['', 'q'],
      ['q=', 'q'],
      ['q=%20%20', 'q'],
      [`q=${'a'.repeat(201)}`, 'q'],
      ['q=a&objects=contacts,nothings', 'objects'],
      ['q=a&objects=Contacts;drop', 'objects'],
      ['q=a&limit=0', 'limit'],
      ['q=a&limit=101', 'limit'],
      ['q=a&limit=ten', 'limit'],
      ['q=a&cursor=abc', 'cursor'],
      [`q=${word}x&cursor=${reused}`, 'cursor'],
      [`q=${word}&objects=tasks&cursor=${reused}`, 'cursor'],
      ['q=a&limit=2.5', 'limit'],
      ['q=a&objects=', 'objects'],
    ]) {
      const res = await stack.api.get(`/search?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await stack.api.get(`/search?q=${'a'.repeat(200)}`)).status).toBe(200);
  });
});
