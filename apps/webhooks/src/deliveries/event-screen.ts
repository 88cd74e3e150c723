import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RecentEvents, RecentWindow } from './recent-events';
import { ScreenBudget } from './screen-budget';
import { PendingScreen, planScreen, WindowEvent } from './screen-plan';
import { SubscriptionFilters } from './subscription-filters';

/** Events read per statement, and statements per call, when a turn screens its own subscription (within its budget too). */
const SCREEN_BATCH = 500;
const SCREEN_ROUNDS = 20;
/** Events read per window when screening every waiting subscription at once, and windows per group of a pass. */
const SHARED_WINDOW = 2_000;
const SHARED_ROUNDS = 10;
/**
 * Recent events kept parsed, with each filter's answers (see RecentEvents), beyond the oldest waiting
 * bookmark: a subscription screened again after each delivery re-tests from its bookmark, so without them
 * every delivery would read, parse and test the events since again.
 */
const RECENT_EVENTS = 2 * SHARED_WINDOW;

/**
 * Filtered subscriptions no replica holds and whose next event has not been tested, with events after their
 * bookmark. One with a screened event still ahead (a match, or a retry under way) is the claim's, not ours.
 * Their filters and types come from SubscriptionFilters, at the revision read here.
 */
const WAITING = `SELECT id, bookmark::text AS bookmark, cursor_revision FROM subscriptions
  WHERE status = 'active' AND filter IS NOT NULL AND lease_token IS NULL
    AND (screened_position IS NULL OR screened_position <= bookmark)
    AND bookmark < (SELECT coalesce(max(position), 0) FROM webhook_events)`;

/**
 * Moves the bookmarks of a window's screened subscriptions in one statement. A subscription moves only if
 * nothing happened to it since it was read: not leased (a turn of its own screens and delivers), its
 * bookmark where it was, and its cursor not replayed nor its filter or types changed (cursor_revision).
 */
const MOVE = `UPDATE subscriptions s SET bookmark = m.bookmark, screened_position = m.screened
  FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[], $5::bigint[]) AS m(id, from_bookmark, revision, bookmark, screened)
  WHERE s.id = m.id AND s.bookmark = m.from_bookmark AND s.cursor_revision = m.revision AND s.lease_token IS NULL
  RETURNING s.id`;

/** What a screening pass did: whether it marked an event to send (a claim has work), and whether work was left for another pass. */
export interface ScreenPass {
  kept: boolean;
  more: boolean;
}

/**
 * Waiting subscriptions in groups whose bookmarks lie within a window of one another, the group nearest the
 * newest events first: subscriptions following the live events are screened before one replaying a backlog,
 * whose window would not reach theirs.
 */
function byBookmark(waiting: PendingScreen[]): PendingScreen[][] {
  const groups: PendingScreen[][] = [];
  for (const w of [...waiting].sort((a, b) => b.bookmark - a.bookmark)) {
    const group = groups[groups.length - 1];
    if (group && group[0].bookmark - w.bookmark <= SHARED_WINDOW) group.push(w);
    else groups.push([w]);
  }
  return groups;
}

/**
 * Applies a subscription's filter ahead of its delivery. The events after its bookmark are tested in
 * position order with the shared evaluator; the bookmark moves past those the filter drops, which leaves
 * no delivery record for them, and the first it keeps is marked screened, so the next prepared attempt
 * is for it. Nothing moves if the subscription's cursor was replayed or its filter changed meanwhile
 * (both bump cursor_revision): the next call tests again from the new bookmark with the new filter.
 * Every call is bounded by a ScreenBudget and lets the event loop run between tests, so screening, however
 * costly the filters or long the backlog, holds up neither this replica's deliveries nor its lease renewals.
 */
@Injectable()
export class EventScreen {
  private readonly recent = new RecentEvents((after, limit) => this.readEvents(after, null, limit), RECENT_EVENTS, SHARED_WINDOW);

  constructor(
    private readonly dataSource: DataSource,
    private readonly filters: SubscriptionFilters,
  ) {}

  /**
   * Whether an event the filter keeps is now next (or the filter is gone): an attempt is worth preparing.
   * False also when the call's budget ran out first: the turn then ends, and the subscription, released, goes
   * on in the shared passes (screenWaiting) from where this left it.
   */
  async screen(subscriptionId: string, token: string): Promise<boolean> {
    const budget = ScreenBudget.forPass(1);
    for (let round = 0; round < SCREEN_ROUNDS; round++) {
      const [sub]: Array<{ bookmark: string; cursor_revision: number }> = await this.dataSource.query(
        `SELECT bookmark::text AS bookmark, cursor_revision FROM subscriptions WHERE id = $1 AND lease_token = $2`,
        [subscriptionId, token],
      );
      if (!sub) return false;
      const definition = (await this.filters.at([{ id: subscriptionId, revision: sub.cursor_revision }])).get(subscriptionId);
      // Changed between the two reads: read it again.
      if (!definition) continue;
      const { holds, eventTypes, cost } = definition;
      if (!holds) return true;
      const limit = Math.min(SCREEN_BATCH, budget.events(subscriptionId, cost));
      if (limit === 0) return false;
      // The bigint travels as text (pos) under a name of its own: ORDER BY position must sort the column,
      // not an output named position, which would sort '10' before '9' and move the bookmark past events never tested.
      const rows: Array<{ pos: string; body: string }> = await this.dataSource.query(
        `SELECT position::text AS pos, body FROM webhook_events
         WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])) ORDER BY position LIMIT $3`,
        [sub.bookmark, eventTypes, limit],
      );
      if (!rows.length) return false;
      // `tested` ends at the event kept, or at the first not tested (rows.length when the filter dropped them all).
      let hit = -1;
      let tested = 0;
      for (; tested < rows.length && budget.take(subscriptionId, cost); tested++) {
        const pause = budget.pause();
        if (pause) await pause;
        if (holds(JSON.parse(rows[tested].body) as object)) {
          hit = tested;
          break;
        }
      }
      if (tested === 0 && hit < 0) return false;
      const bookmark = tested > 0 ? rows[tested - 1].pos : sub.bookmark;
      // TypeORM answers an UPDATE as [rows, count]: the rows are what moved.
      const [moved]: [unknown[], number] = await this.dataSource.query(
        `UPDATE subscriptions SET bookmark = $3, screened_position = $4 WHERE id = $1 AND lease_token = $2 AND cursor_revision = $5 RETURNING id`,
        [subscriptionId, token, bookmark, hit < 0 ? null : rows[hit].pos, sub.cursor_revision],
      );
      if (!moved.length) continue;
      if (hit >= 0) return true;
      if (tested < rows.length || rows.length < limit) return false;
    }
    return false;
  }

  /**
   * One pass over every waiting filtered subscription (WAITING): each event is read and parsed once and tested
   * once per distinct filter (see planScreen), and the bookmarks of the subscriptions screened in a window move
   * in one statement. A subscription the filter keeps an event for is left with it marked screened, for the
   * claim to lease it and deliver. The pass tests at most `passCost` conditions, each subscription an equal
   * share (ScreenBudget), so one with a costly filter or a long backlog moves on by its share a pass and the
   * rest are screened in the same pass. `onKept` is told as soon as a window's moves marked an event to send,
   * so its delivery waits for no other group of the pass.
   */
  async screenWaiting(onKept: () => void = () => undefined, passCost?: number): Promise<ScreenPass> {
    const rows: Array<{ id: string; bookmark: string; cursor_revision: number }> = await this.dataSource.query(WAITING);
    const definitions = await this.filters.at(rows.map((r) => ({ id: r.id, revision: r.cursor_revision })));
    // One changed since WAITING read it, or whose filter was just removed, is the next look's.
    const waiting: PendingScreen[] = rows.flatMap((r) => {
      const d = definitions.get(r.id);
      return d?.filterKey
        ? [{ id: r.id, filterKey: d.filterKey, cost: d.cost, bookmark: Number(r.bookmark), eventTypes: d.eventTypes, revision: r.cursor_revision }]
        : [];
    });
    const budget = ScreenBudget.forPass(waiting.length, passCost);
    const pass: ScreenPass = { kept: false, more: false };
    for (const group of byBookmark(waiting)) {
      const { kept, more } = await this.screenGroup(group, budget, onKept);
      pass.kept ||= kept;
      pass.more ||= more;
    }
    return pass;
  }

  /** Screens subscriptions with nearby bookmarks window by window, each until it is caught up, keeps an event, or has spent its share. */
  private async screenGroup(group: PendingScreen[], budget: ScreenBudget, onKept: () => void): Promise<ScreenPass> {
    const holds = (key: string, event: object) => this.filters.predicate(key)(event);
    const pass: ScreenPass = { kept: false, more: false };
    let waiting = group;
    for (let round = 0; waiting.length; round++) {
      const able = waiting.filter((w) => budget.has(w.id));
      if (able.length < waiting.length || (able.length && round === SHARED_ROUNDS)) pass.more = true;
      waiting = able;
      if (!waiting.length || round === SHARED_ROUNDS) break;
      const start = waiting.reduce((min, w) => Math.min(min, w.bookmark), Infinity);
      const types = waiting.some((w) => !w.eventTypes) ? null : [...new Set(waiting.flatMap((w) => w.eventTypes ?? []))];
      // No more events than the subscriptions may still test (events of other types aside): a far-behind one
      // with a costly filter does not read a whole window to test a few of its events.
      const limit = Math.max(1, Math.min(SHARED_WINDOW, Math.max(...waiting.map((w) => budget.events(w.id, w.cost)))));
      const { events: window, complete } = (await this.recent.after(start, types, limit)) ?? (await this.readWindow(start, types, limit));
      if (!window.length) break;
      const moves = await planScreen(waiting, start, window, holds, budget);
      // TypeORM answers an UPDATE as [rows, count]. Read as the rows, it made every move look refused, so a
      // subscription got one window a pass and a kept event waited for the next look to be claimed.
      const [moved]: [Array<{ id: string }>, number] = moves.length
        ? await this.dataSource.query(MOVE, [
            moves.map((m) => m.id),
            moves.map((m) => m.from),
            moves.map((m) => m.revision),
            moves.map((m) => m.bookmark),
            moves.map((m) => m.screened),
          ])
        : [[], 0];
      const applied = new Set(moved.map((m) => m.id));
      if (moves.some((m) => applied.has(m.id) && m.screened !== null)) {
        pass.kept = true;
        onKept();
      }
      const next = new Map(moves.filter((m) => applied.has(m.id) && m.screened === null).map((m) => [m.id, m.bookmark]));
      const planned = new Set(moves.map((m) => m.id));
      // Caught up, kept an event, or changed by someone else meanwhile: out of the group. The rest go on from
      // where they moved (one whose share ran out leaves at the next round's look at the budget).
      waiting = waiting.flatMap((w) => (next.has(w.id) ? [{ ...w, bookmark: next.get(w.id)! }] : planned.has(w.id) ? [] : [w]));
      if (complete) waiting = waiting.filter((w) => w.bookmark < window[window.length - 1].pos);
    }
    return pass;
  }

  /** The events of `types` (all, for null) after `start`, read from the table: for a window older than the recent events kept. */
  private async readWindow(start: number, types: string[] | null, limit: number): Promise<RecentWindow> {
    const events = await this.readEvents(start, types, limit);
    return { events, complete: events.length < limit };
  }

  private async readEvents(after: number, types: string[] | null, limit: number): Promise<WindowEvent[]> {
    const rows: Array<{ pos: string; type: string; body: string }> = await this.dataSource.query(
      `SELECT position::text AS pos, type, body FROM webhook_events
       WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])) ORDER BY position LIMIT $3`,
      [after, types, limit],
    );
    return rows.map((r) => ({ pos: Number(r.pos), type: r.type, body: r.body }));
  }
}
