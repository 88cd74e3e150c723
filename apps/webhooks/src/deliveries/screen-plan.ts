import { ScreenBudget } from './screen-budget';

/** A filtered subscription waiting to be screened, as read for a batch: its filter as canonical jsonb text. */
export interface PendingScreen {
  id: string;
  filterKey: string;
  /** The filter's conditions: what testing one event with it charges the budget. */
  cost: number;
  bookmark: number;
  eventTypes: string[] | null;
  revision: number;
}

/** One event of a window: every event of the types asked for between the window's start and its last position. */
export interface WindowEvent {
  pos: number;
  type: string;
  body: string;
  /** The body parsed, once it was tested, and each filter's answer for it: kept with the event, so a window read again is not tested again. */
  parsed?: object;
  tested?: Map<string, boolean>;
}

/** Where a subscription's bookmark goes, and the event the filter keeps next (null when it kept none in the window). */
export interface ScreenMove {
  id: string;
  from: number;
  revision: number;
  bookmark: number;
  screened: number | null;
}

/**
 * Screens a window of events for many subscriptions at once. Each event is tested once per distinct filter
 * (`holds(filterKey, event)`), whatever the number of subscriptions sharing it, and each body is parsed once.
 * The window must hold every event of the subscriptions' types after `start` up to its last position, in
 * position order: a subscription whose bookmark is in [start, last) then moves past every event the filter
 * drops, and stops just before the first it keeps, which it marks screened; one outside is left alone. A
 * test is charged to the subscription that makes it: one whose share of the budget is spent stops where it
 * got to (no move when that is where it was), to go on in the next pass. The event loop gets a turn between
 * tests whenever the budget says so; the window is this call's own, so nothing moves under it meanwhile.
 */
export async function planScreen(
  subs: PendingScreen[],
  start: number,
  window: WindowEvent[],
  holds: (filterKey: string, event: object) => boolean,
  budget: ScreenBudget,
): Promise<ScreenMove[]> {
  if (!window.length) return [];
  const last = window[window.length - 1].pos;
  const moves: ScreenMove[] = [];
  for (const sub of subs) {
    if (sub.bookmark < start || sub.bookmark >= last) continue;
    const types = sub.eventTypes && new Set(sub.eventTypes);
    const first = firstAfter(window, sub.bookmark);
    let i = first;
    let spent = false;
    for (; i < window.length; i++) {
      const event = window[i];
      if (types && !types.has(event.type)) continue;
      const tested = (event.tested ??= new Map());
      let answer = tested.get(sub.filterKey);
      if (answer === undefined) {
        if (!budget.take(sub.id, sub.cost)) {
          spent = true;
          break;
        }
        const pause = budget.pause();
        if (pause) await pause;
        tested.set(sub.filterKey, (answer = holds(sub.filterKey, (event.parsed ??= JSON.parse(event.body) as object))));
      }
      if (answer) break;
    }
    const before = i > 0 ? Math.max(sub.bookmark, window[i - 1].pos) : sub.bookmark;
    if (spent) {
      if (i > first) moves.push({ id: sub.id, from: sub.bookmark, revision: sub.revision, bookmark: before, screened: null });
      continue;
    }
    const kept = i < window.length;
    moves.push({ id: sub.id, from: sub.bookmark, revision: sub.revision, bookmark: kept ? before : last, screened: kept ? window[i].pos : null });
  }
  return moves;
}

/** The index of the first event after `position` (binary search: the window is in position order). */
export function firstAfter(window: WindowEvent[], position: number): number {
  let lo = 0;
  let hi = window.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (window[mid].pos <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
