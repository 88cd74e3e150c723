import { randomBytes } from 'crypto';
import { startStack, TestStack } from '../support/stack';

/** A word of letters no other test's data contains. */
const token = () =>
  `z${randomBytes(5)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'abcdefghij'[Number(d)])}`;

interface Hit {
  object: string;
  id: string;
  score: number;
}

interface Answer {
  data: Hit[];
  has_more: boolean;
  next_cursor?: string;
  meta?: { skipped_words?: string[]; capped_objects?: string[]; typo_words?: string[] };
}

/** GET /search reads a bounded number of rows per word however common it is (docs/search.md, "Bounds"). */
describe('search bounded by the page', () => {
  // Low enough that a test seeds more rows sharing a word than the exact tier ranks.
  const CANDIDATES = 20;
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { SEARCH_WORD_CANDIDATES: String(CANDIDATES) } });
  });
  afterAll(() => stack?.stop());

  const search = async (q: string, extra = ''): Promise<Answer> => {
    const res = await stack.api.get(`/search?q=${encodeURIComponent(q)}${extra}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const contacts = async (items: Array<Record<string, unknown>>): Promise<Array<{ id: string }>> => {
    const res = await stack.api.post('/contacts/batch', { operation: 'create', items });
    expect(res.status).toBe(200);
    return res.body.data.map((r: { data: { id: string } }) => r.data);
  };

  it('does not rank a word held by more rows than the cap: meta names it and the object, and paging still reaches every row once', async () => {
    const word = token();
    const rare = token();
    const many = await contacts(
      Array.from({ length: CANDIDATES + 10 }, (_, i) => ({ email: `${token()}${i}@example.com`, first_name: 'Ada', last_name: word })),
    );
    const [alone, both] = await contacts([
      { email: `${token()}@example.com`, first_name: word },
      { email: `${token()}@example.com`, first_name: rare, last_name: word },
    ]);
    const company = (await stack.api.post('/companies', { name: word })).body.data;

    const first = await search(word, '&limit=5');
    expect(first.meta).toEqual({ skipped_words: [word], capped_objects: ['contacts'] });
    // Companies hold the word once: their exact hit is ranked and comes first.
    expect(first.data[0]).toMatchObject({ object: 'companies', id: company.id, score: 0.95 });
    expect(first.data.slice(1).every((h) => h.object === 'contacts' && h.score === 0.7)).toBe(true);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(word, `&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.meta).toEqual({ skipped_words: [word], capped_objects: ['contacts'] });
      seen.push(...page.data.filter((h) => h.object === 'contacts').map((h) => h.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...many, alone, both].map((c) => c.id).sort());

    // A rarer word of q narrows the rows to rank: the best row is ranked as exact, and nothing was skipped.
    const narrowed = await search(`${rare} ${word}`);
    expect(narrowed.meta).toBeUndefined();
    expect(narrowed.data).toEqual([expect.objectContaining({ object: 'contacts', id: both.id, score: 0.95 })]);
  });

  it('answers 40 four-letter nonsense words, looking up typos for the three longest', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `zq${'bcdfghjklm'[i % 10]}${'vwxyz'[Math.floor(i / 10)]}`);
    const nonsense = await search(words.join(' '));
    expect(nonsense.data).toEqual([]);
    expect(nonsense.meta).toEqual({ typo_words: words.slice(0, 3).sort() });

    const word = token();
    const [ada] = await contacts([{ email: `${token()}@example.com`, first_name: 'Ada', last_name: word }]);
    // The longest words are looked up (a tie goes to the earlier word); the others must still start a word.
    const typo = `${word.slice(0, -1)}q`;
    const found = await search(`${typo} ada zqbv zqcv zqdv`);
    expect(found.data).toEqual([]);
    expect(found.meta).toEqual({ typo_words: [typo, 'zqbv', 'zqcv'].sort() });
    expect((await search(`${typo} ada`)).data).toEqual([expect.objectContaining({ id: ada.id, score: 0.45 })]);
  });

  it('answers a one-letter query by word starts', async () => {
    const word = token();
    const [ada] = await contacts([{ email: `${token()}@example.com`, first_name: 'Ada', last_name: word }]);
    const answer = await search('z', '&objects=contacts&limit=100');
    expect(answer.data.map((h) => h.id)).toContain(ada.id);
    expect(answer.data.every((h) => h.score === 0.7)).toBe(true);
  });
});
