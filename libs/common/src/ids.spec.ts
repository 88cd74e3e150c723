import { IdPrefix, isId, newId } from './ids';

describe('newId', () => {
  it('makes well-formed, unique ids that sort in creation order', () => {
    const ids = Array.from({ length: 20_000 }, () => newId(IdPrefix.Contact));
    expect(ids.every((id) => isId(id, IdPrefix.Contact))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('draws the random part from the whole alphabet, not a repeating pattern', async () => {
    // Ids made in different milliseconds get fresh randomness; within one they count up.
    const randomParts = new Set<string>();
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const random = newId(IdPrefix.Deal).slice('deal_'.length + 10);
      randomParts.add(random);
      for (const c of random) seen.add(c);
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(randomParts.size).toBe(200);
    expect(seen.size).toBe(32);
  });
});
