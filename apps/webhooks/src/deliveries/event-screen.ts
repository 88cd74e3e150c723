import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RecentEvents, RecentWindow } from './recent-events';
import { PendingScreen, planScreen, WindowEvent } from './screen-plan';
import { SubscriptionFilters } from './subscription-filters';

/** Events tested per statement, and statements per call: a call tests at most 10,000 before it gives its slot up. */
const SCREEN_BATCH = 500;
const SCREEN_ROUNDS = 20;
/** Events read per window when screening every waiting subscription at once, and windows per call. */
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

/**
 * Applies a subscription's filter ahead of its delivery. The events after its bookmark are tested in
 * position order with the shared evaluator; the bookmark moves past those the filter drops, which leaves
 * no delivery record for them, and the first it keeps is marked screened, so the next prepared attempt
 * is for it. Nothing moves if the subscription's cursor was replayed or its filter changed meanwhile
 * (both bump cursor_revision): the next call tests again from the new bookmark with the new filter.
 */
@Injectable()
export class EventScreen {
  private readonly recent = new RecentEvents((after, limit) => this.readEvents(after, null, limit), RECENT_EVENTS, SHARED_WINDOW);

  constructor(
    private readonly dataSource: DataSource,
    private readonly filters: SubscriptionFilters,
  ) {}

  /** Whether an event the filter keeps is now next (or the filter is gone): an attempt is worth preparing. */
  async screen(subscriptionId: string, token: string): Promise<boolean> {
    for (let round = 0; round < SCREEN_ROUNDS; round++) {
      const [sub]: Array<{ bookmark: string; cursor_revision: number }> = await this.dataSource.query(
        `SELECT bookmark::text AS bookmark, cursor_revision FROM subscriptions WHERE id = $1 AND lease_token = $2`,
        [subscriptionId, token],
      );
      if (!sub) return false;
      const definition = (await this.filters.at([{ id: subscriptionId, revision: sub.cursor_revision }])).get(subscriptionId);
      // Changed between the two reads: read it again.
      if (!definition) continue;
      const { holds, eventTypes } = definition;
      if (!holds) return true;
      // The bigint travels as text (pos) under a name of its own: ORDER BY position must sort the column,
      // not an output named position, which would sort '10' before '9' and move the bookmark past events never tested.
      const rows: Array<{ pos: string; body: string }> = await this.dataSource.query(
        `SELECT position::text AS pos, body FROM webhook_events
         WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])) ORDER BY position LIMIT $3`,
        [sub.bookmark, eventTypes, SCREEN_BATCH],
      );
      if (!rows.length) return false;
      const hit = rows.findIndex((r) => holds(JSON.parse(r.body) as object));
      const bookmark = hit < 0 ? rows[rows.length - 1].pos : hit > 0 ? rows[hit - 1].pos : sub.bookmark;
      const moved: unknown[] = await this.dataSource.query(
        `UPDATE subscriptions SET bookmark = $3, screened_position = $4 WHERE id = $1 AND lease_token = $2 AND cursor_revision = $5 RETURNING id`,
        [subscriptionId, token, bookmark, hit < 0 ? null : rows[hit].pos, sub.cursor_revision],
      );
      if (!moved.length) continue;
      if (hit >= 0) return true;
      if (rows.length < SCREEN_BATCH) return false;
    }
    return false;
  }

  /**
   * Screens every waiting filtered subscription (WAITING) against the new events at once: each event is read
   * and parsed once and tested once per distinct filter (see planScreen), and the bookmarks of all the
   * subscriptions screened in a window move in one statement. A subscription the filter keeps an event for is
   * left with it marked screened, for the claim to lease it and deliver. Answers whether work was left for
   * another call (the rounds ran out).
   */
  async screenWaiting(): Promise<boolean> {
    const rows: Array<{ id: string; bookmark: string; cursor_revision: number }> = await this.dataSource.query(WAITING);
    const definitions = await this.filters.at(rows.map((r) => ({ id: r.id, revision: r.cursor_revision })));
    // One changed since WAITING read it, or whose filter was just removed, is the next look's.
    let waiting: PendingScreen[] = rows.flatMap((r) => {
      const d = definitions.get(r.id);
      return d?.filterKey ? [{ id: r.id, filterKey: d.filterKey, bookmark: Number(r.bookmark), eventTypes: d.eventTypes, revision: r.cursor_revision }] : [];
    });
    const holds = (key: string, event: object) => this.filters.predicate(key)(event);
    for (let round = 0; round < SHARED_ROUNDS; round++) {
      if (!waiting.length) return false;
      const start = waiting.reduce((min, w) => Math.min(min, w.bookmark), Infinity);
      const types = waiting.some((w) => !w.eventTypes) ? null : [...new Set(waiting.flatMap((w) => w.eventTypes ?? []))];
      const { events: window, complete } = (await this.recent.after(start, types, SHARED_WINDOW)) ?? (await this.readWindow(start, types));
      if (!window.length) return false;
      const moves = planScreen(waiting, start, window, holds);
      const moved: Array<{ id: string }> = moves.length
        ? await this.dataSource.query(MOVE, [
            moves.map((m) => m.id),
            moves.map((m) => m.from),
            moves.map((m) => m.revision),
            moves.map((m) => m.bookmark),
            moves.map((m) => m.screened),
          ])
        : [];
      const applied = new Set(moved.map((m) => m.id));
      const next = new Map(moves.filter((m) => applied.has(m.id) && m.screened === null).map((m) => [m.id, m.bookmark]));
      const planned = new Set(moves.map((m) => m.id));
      // Caught up, kept an event, or changed by someone else meanwhile: out of the batch. The rest go on from where they moved.
      waiting = waiting.flatMap((w) => (next.has(w.id) ? [{ ...w, bookmark: next.get(w.id)! }] : planned.has(w.id) ? [] : [w]));
      if (complete) waiting = waiting.filter((w) => w.bookmark < window[window.length - 1].pos);
    }
    return waiting.length > 0;
  }

  /** The events of `types` (all, for null) after `start`, read from the table: for a window older than the recent events kept. */
  private async readWindow(start: number, types: string[] | null): Promise<RecentWindow> {
    const events = await this.readEvents(start, types, SHARED_WINDOW);
    return { events, complete: events.length < SHARED_WINDOW };
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
