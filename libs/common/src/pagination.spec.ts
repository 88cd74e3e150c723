import { CursorCodec, idKey } from './cursors';
import { countWithinBudget, fitPage, toPage } from './pagination';

const item = (bytes: number) => ({ pad: 'x'.repeat(bytes - 10) }); // {"pad":""} is 10 bytes

describe('page byte budget', () => {
  it('counts items in order until the next would pass the budget, brackets and commas included', () => {
    const items = [item(100), item(100), item(100)];
    expect(JSON.stringify(items.slice(0, 2)).length).toBe(203);
    expect(countWithinBudget(items, 203)).toBe(2);
    expect(countWithinBudget(items, 202)).toBe(1);
    expect(countWithinBudget(items, 304)).toBe(3);
    expect(countWithinBudget([], 10)).toBe(0);
  });

  it('measures UTF-8 bytes, not characters', () => {
    const wide = [{ s: 'é'.repeat(50) }, { s: 'é'.repeat(50) }];
    const oneBytes = Buffer.byteLength(JSON.stringify([wide[0]]));
    expect(countWithinBudget(wide, oneBytes + 60)).toBe(1);
  });

  it('serves an item larger than the budget alone rather than nothing', () => {
    expect(countWithinBudget([item(5000), item(10)], 1000)).toBe(1);
    expect(fitPage([item(5000), item(10)], 50, false, 1000)).toEqual({ items: [item(5000)], hasMore: true });
  });

  it('keeps has_more from the rows beyond the count limit', () => {
    expect(fitPage([item(10), item(10), item(10)], 2, true, 1000)).toEqual({ items: [item(10), item(10)], hasMore: true });
    expect(fitPage([item(10), item(10)], 2, false, 1000)).toEqual({ items: [item(10), item(10)], hasMore: false });
  });

  it('toPage ends a page early at the budget and resumes after the last item served', () => {
    const cursors = new CursorCodec(['pagination spec secret, long enough to sign']);
    const id = (i: number) => `thing_0000000000000000000000000${i}`;
    const rows = Array.from({ length: 6 }, (_, i) => ({ id: id(i), bytes: 270 }));
    const page = toPage(
      cursors,
      'things',
      rows,
      5,
      (r) => r.id,
      (r) => ({ id: r.id, ...item(r.bytes) }),
      1000,
    );
    expect(page.data.map((d) => d.id)).toEqual([id(0), id(1), id(2)]);
    expect(page.has_more).toBe(true);
    expect(cursors.decode('things', page.next_cursor, idKey())).toBe(id(2));

    const last = toPage(
      cursors,
      'things',
      rows.slice(0, 2),
      5,
      (r) => r.id,
      (r) => ({ id: r.id }),
      1000,
    );
    expect(last).toEqual({ data: [{ id: id(0) }, { id: id(1) }], has_more: false });
  });
});
