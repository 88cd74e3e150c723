import { RecentEvents } from './recent-events';
import { WindowEvent } from './screen-plan';

/** The table as the statements see it: events appended over time, positions with gaps (sequence values a rollback used). */
function table() {
  const rows: WindowEvent[] = [];
  let reads = 0;
  const add = (pos: number, type = 'contact.created') => rows.push({ pos, type, body: JSON.stringify({ pos, type }) });
  const direct = (after: number, types: string[] | null, limit: number) =>
    rows.filter((r) => r.pos > after && (!types || types.includes(r.type))).slice(0, limit);
  const read = async (after: number, limit: number) => {
    reads++;
    return direct(after, null, limit).map((r) => ({ ...r }));
  };
  return { add, direct, read, reads: () => reads };
}

const positions = (events: WindowEvent[] | undefined) => events?.map((e) => e.pos);

describe('RecentEvents', () => {
  it('answers every window as the table would, while events arrive, with gaps and several types', async () => {
    const t = table();
    const recent = new RecentEvents(t.read, 8, 3);
    for (const [pos, type] of [
      [1, 'a'],
      [2, 'b'],
      [4, 'a'],
      [7, 'a'],
    ] as const)
      t.add(pos, type);
    expect(positions((await recent.after(1, ['a'], 10))?.events)).toEqual([4, 7]);
    t.add(8, 'b');
    t.add(11, 'a');
    t.add(12, 'a');
    for (const [start, types, limit] of [
      [1, ['a'], 10],
      [4, null, 2],
      [7, ['b'], 5],
      [2, ['a', 'b'], 10],
    ] as const) {
      const window = await recent.after(start, types ? [...types] : null, limit);
      expect(positions(window?.events)).toEqual(positions(t.direct(start, types ? [...types] : null, limit)));
    }
    // Older than the range kept: the caller reads it from the table.
    expect(await recent.after(0, null, 10)).toBeUndefined();
  });

  it('says a window is complete only when it reached the head', async () => {
    const t = table();
    for (let p = 1; p <= 5; p++) t.add(p);
    const recent = new RecentEvents(t.read, 100, 2);
    expect(await recent.after(0, null, 3)).toEqual({ events: expect.any(Array), complete: false });
    const all = await recent.after(0, null, 10);
    expect(positions(all?.events)).toEqual([1, 2, 3, 4, 5]);
    expect(all?.complete).toBe(true);
  });

  it('keeps each event parsed and tested between windows, and reads only what is new', async () => {
    const t = table();
    for (let p = 1; p <= 4; p++) t.add(p);
    const recent = new RecentEvents(t.read, 100, 10);
    const first = await recent.after(0, null, 10);
    first!.events[2].tested = new Map([['f', true]]);
    const readsBefore = t.reads();
    t.add(5);
    const again = await recent.after(2, null, 10);
    expect(positions(again?.events)).toEqual([3, 4, 5]);
    expect(again!.events[0].tested?.get('f')).toBe(true);
    expect(t.reads() - readsBefore).toBe(1);
  });

  it('lets events before the window go once it holds more than its capacity, and then serves no older window', async () => {
    const t = table();
    for (let p = 1; p <= 12; p++) t.add(p);
    const recent = new RecentEvents(t.read, 4, 4);
    await recent.after(0, null, 12);
    expect(positions((await recent.after(6, null, 3))?.events)).toEqual([7, 8, 9]);
    expect(await recent.after(5, null, 3)).toBeUndefined();
  });

  it('leaves a window mostly of other types to the table rather than holding them all', async () => {
    const t = table();
    for (let p = 1; p <= 10; p++) t.add(p, 'other');
    t.add(11, 'rare');
    const recent = new RecentEvents(t.read, 4, 2);
    expect(await recent.after(0, ['rare'], 5)).toBeUndefined();
  });
});
