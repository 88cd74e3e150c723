import { performance } from 'perf_hooks';
import { setImmediate as nextTurn } from 'timers/promises';

/**
 * Condition tests one screening pass may make in all (an event tested with a filter of n conditions costs n),
 * as a filtered page of the event log may (EVENTS_FILTER_SCAN_COST). A pass that reaches it stops, each
 * subscription's bookmark where its screening got to, and the next pass goes on from there.
 */
export const SCREEN_PASS_COST = 50_000;
/**
 * The longest screening runs before it lets the event loop have a turn: the claims, deliveries, lease renewals
 * and requests of this replica wait for no more than this, whatever the filters and the backlog.
 */
export const SCREEN_SLICE_MS = 5;

/**
 * Bounds and slices the work of one screening pass. Each subscription screened in the pass may spend an equal
 * share of SCREEN_PASS_COST, so one whose filter is costly, or that is far behind (a replay), screens fewer
 * events a pass and takes more passes, while the others' shares are theirs: none waits for it to catch up.
 * Answers another subscription with the same filter already got are free (see planScreen).
 */
export class ScreenBudget {
  private readonly spent = new Map<string, number>();
  private sliceStart = performance.now();

  constructor(
    /** What each subscription may spend, in condition tests; at least one event is always tested. */
    readonly share: number,
    private readonly sliceMs = SCREEN_SLICE_MS,
  ) {}

  /** A pass over `subscriptions` subscriptions: the pass's cost split equally between them. */
  static forPass(subscriptions: number, passCost = SCREEN_PASS_COST): ScreenBudget {
    return new ScreenBudget(Math.max(1, Math.floor(passCost / Math.max(1, subscriptions))));
  }

  /** Charges one test of a filter of `cost` conditions to `id`; false once its share is spent (nothing charged). */
  take(id: string, cost: number): boolean {
    const spent = this.spent.get(id) ?? 0;
    if (spent >= this.share) return false;
    this.spent.set(id, spent + Math.max(1, cost));
    return true;
  }

  /** Whether `id` may test another event in this pass. */
  has(id: string): boolean {
    return (this.spent.get(id) ?? 0) < this.share;
  }

  /** Events `id` may still test with a filter of `cost` conditions in this pass. */
  events(id: string, cost: number): number {
    return Math.max(0, Math.ceil((this.share - (this.spent.get(id) ?? 0)) / Math.max(1, cost)));
  }

  /** Gives the event loop a turn once this slice has run SCREEN_SLICE_MS; undefined (no wait) before that. */
  pause(): Promise<void> | undefined {
    if (performance.now() - this.sliceStart < this.sliceMs) return undefined;
    return nextTurn().then(() => {
      this.sliceStart = performance.now();
    });
  }
}
