import { firstAfter, WindowEvent } from './screen-plan';

/** A window of events after a position, and whether it holds every one there was when it was read. */
export interface RecentWindow {
  events: WindowEvent[];
  complete: boolean;
}

/**
 * The latest events of webhook_events, every type, kept in position order with each body parsed once and
 * each filter's answer for it (see planScreen): a subscription screened again after a delivery, or one
 * behind the rest, tests events other subscriptions already read, and a filter they share has answered
 * already. The events are immutable and their positions become visible in increasing order (the intake
 * holds the insert lock), so reading `position > to` extends a range known to hold every event in
 * (from, to]. A window starting below that range is not served (the caller reads it from the table).
 */
export class RecentEvents {
  private events: WindowEvent[] = [];
  /** Every event with from < position <= to is in `events`. */
  private from = -1;
  private to = -1;

  constructor(
    /** Every event after `after`, in position order, at most `limit`. */
    private readonly read: (after: number, limit: number) => Promise<WindowEvent[]>,
    /** Events kept at most beyond a window's start before the range starts over. */
    private readonly capacity: number,
    /** Events read per statement. */
    private readonly batch: number,
  ) {}

  /** The events of `types` (all, for null) after `start`, at most `limit`; undefined when `start` is older than the range. */
  async after(start: number, types: string[] | null, limit: number): Promise<RecentWindow | undefined> {
    if (start < this.from) return undefined;
    if (start > this.to) this.startOver(start);
    const wanted = types && new Set(types);
    // Events at or before the start are no one's in this call; when the range is full they go first.
    if (this.events.length > this.capacity) {
      this.events = this.events.slice(firstAfter(this.events, start));
      this.from = start;
    }
    for (let atHead = false; ;) {
      const held: WindowEvent[] = [];
      for (let i = firstAfter(this.events, start); i < this.events.length && held.length < limit; i++) {
        if (!wanted || wanted.has(this.events[i].type)) held.push(this.events[i]);
      }
      if (held.length >= limit) return { events: held, complete: false };
      if (atHead) return { events: held, complete: true };
      // Mostly events of other types: not worth keeping, read as the table serves them.
      if (this.events.length - firstAfter(this.events, start) >= this.capacity) return undefined;
      const rows = await this.read(this.to, this.batch);
      this.events.push(...rows);
      if (rows.length) this.to = rows[rows.length - 1].pos;
      atHead = rows.length < this.batch;
    }
  }

  private startOver(start: number): void {
    this.events = [];
    this.from = start;
    this.to = start;
  }
}
