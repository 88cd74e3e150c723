import { compileEventFilter } from '@crm/common';
import { ScreenBudget } from './screen-budget';
import { PendingScreen, planScreen, WindowEvent } from './screen-plan';

const event = (pos: number, type: string, stage: string): WindowEvent => ({ pos, type, body: JSON.stringify({ type, data: { stage } }) });
const sub = (id: string, filterKey: string, bookmark: number, eventTypes: string[] | null = null, cost = 1): PendingScreen => ({
  id,
  filterKey,
  cost,
  bookmark,
  eventTypes,
  revision: 3,
});

describe('planScreen', () => {
  // Positions across a digit boundary: the order is numeric, as the window is read. Fresh for each test: a
  // window keeps the answers it was given.
  let window: WindowEvent[];
  beforeEach(() => {
    window = [event(8, 'deal.updated', 'open'), event(9, 'contact.updated', 'won'), event(10, 'deal.updated', 'won'), event(11, 'deal.updated', 'open')];
  });
  const won = JSON.stringify({ 'data.stage': 'won' });
  const lost = JSON.stringify({ 'data.stage': 'lost' });

  const plenty = () => new ScreenBudget(1_000);

  it('stops each subscription just before the first event its filter keeps, and moves one that keeps none past the window', async () => {
    const calls: string[] = [];
    const holds = (key: string, e: object) => (calls.push(key), compileEventFilter(JSON.parse(key))(e));
    const moves = await planScreen(
      [sub('a', won, 7), sub('b', won, 7, ['deal.updated']), sub('c', lost, 7), sub('d', won, 10), sub('e', won, 11)],
      7,
      window,
      holds,
      plenty(),
    );
    expect(moves).toEqual([
      { id: 'a', from: 7, revision: 3, bookmark: 8, screened: 9 },
      { id: 'b', from: 7, revision: 3, bookmark: 9, screened: 10 },
      { id: 'c', from: 7, revision: 3, bookmark: 11, screened: null },
      { id: 'd', from: 10, revision: 3, bookmark: 11, screened: null },
    ]);
    // Each event is tested once per distinct filter, however many subscriptions share it.
    expect(calls.filter((k) => k === won)).toHaveLength(4);
    expect(calls.filter((k) => k === lost)).toHaveLength(4);
  });

  it('keeps the bookmark when the first event after it is kept, and leaves out subscriptions outside the window', async () => {
    const holds = (key: string, e: object) => compileEventFilter(JSON.parse(key))(e);
    expect(await planScreen([sub('a', won, 9), sub('z', won, 3)], 7, window, holds, plenty())).toEqual([
      { id: 'a', from: 9, revision: 3, bookmark: 9, screened: 10 },
    ]);
    expect(await planScreen([sub('a', won, 9)], 9, [], holds, plenty())).toEqual([]);
  });

  it('stops a subscription whose share is spent where it got to, while the others screen on', async () => {
    const holds = (key: string, e: object) => compileEventFilter(JSON.parse(key))(e);
    // A share of 4 conditions: the costly filter (2 a test) tests two events, the cheap one (1) four.
    const budget = new ScreenBudget(4);
    const moves = await planScreen([sub('costly', lost, 7, null, 2), sub('cheap', lost, 7, null, 1), sub('none', lost, 10, null, 5)], 7, window, holds, budget);
    expect(moves).toEqual([
      { id: 'costly', from: 7, revision: 3, bookmark: 9, screened: null },
      // Shares answers: events 8 and 9 were tested for `costly` with the same filter, so they cost `cheap` nothing.
      { id: 'cheap', from: 7, revision: 3, bookmark: 11, screened: null },
      { id: 'none', from: 10, revision: 3, bookmark: 11, screened: null },
    ]);
    expect([budget.has('costly'), budget.has('cheap')]).toEqual([false, true]);
    // Spent before its first test: no move at all, and the next pass starts where it was.
    expect(await planScreen([sub('costly', won, 9, null, 2)], 7, window, holds, budget)).toEqual([]);
  });

  it('gives the event loop a turn between tests once a slice has run long enough', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      const slow = (key: string, e: object) => {
        const until = Date.now() + 3;
        while (Date.now() < until);
        return compileEventFilter(JSON.parse(key))(e);
      };
      await planScreen([sub('a', lost, 7)], 7, window, slow, new ScreenBudget(1_000, 1));
    } finally {
      clearInterval(ticking);
    }
    expect(turns).toBeGreaterThan(0);
  });
});
