import { compileEventFilter } from '@crm/common';
import { PendingScreen, planScreen, WindowEvent } from './screen-plan';

const event = (pos: number, type: string, stage: string): WindowEvent => ({ pos, type, body: JSON.stringify({ type, data: { stage } }) });
const sub = (id: string, filterKey: string, bookmark: number, eventTypes: string[] | null = null): PendingScreen => ({
  id,
  filterKey,
  bookmark,
  eventTypes,
  revision: 3,
});

describe('planScreen', () => {
  // Positions across a digit boundary: the order is numeric, as the window is read.
  const window = [event(8, 'deal.updated', 'open'), event(9, 'contact.updated', 'won'), event(10, 'deal.updated', 'won'), event(11, 'deal.updated', 'open')];
  const won = JSON.stringify({ 'data.stage': 'won' });
  const lost = JSON.stringify({ 'data.stage': 'lost' });

  it('stops each subscription just before the first event its filter keeps, and moves one that keeps none past the window', () => {
    const calls: string[] = [];
    const holds = (key: string, e: object) => (calls.push(key), compileEventFilter(JSON.parse(key))(e));
    const moves = planScreen([sub('a', won, 7), sub('b', won, 7, ['deal.updated']), sub('c', lost, 7), sub('d', won, 10), sub('e', won, 11)], 7, window, holds);
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

  it('keeps the bookmark when the first event after it is kept, and leaves out subscriptions outside the window', () => {
    const holds = (key: string, e: object) => compileEventFilter(JSON.parse(key))(e);
    expect(planScreen([sub('a', won, 9), sub('z', won, 3)], 7, window, holds)).toEqual([{ id: 'a', from: 9, revision: 3, bookmark: 9, screened: 10 }]);
    expect(planScreen([sub('a', won, 9)], 9, [], holds)).toEqual([]);
  });
});
