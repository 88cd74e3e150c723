import { compileEventFilter, EventPredicate } from '@crm/common';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PendingScreen, planScreen, WindowEvent } from './screen-plan';

/** Events tested per statement, and statements per call: a call tests at most 10,000 before it gives its slot up. */
const SCREEN_BATCH = 500;
const SCREEN_ROUNDS = 20;
/** Compiled filters kept, by their JSON; a subscription's filter is compiled once, not per event. */
const CACHED_FILTERS = 5_000;
/** Events read per window when screening every waiting subscription at once, and windows per call. */
const SHARED_WINDOW = 2_000;
const SHARED_ROUNDS = 10;

/**
 * Filtered subscriptions no replica holds and whose next event has not been tested, with events after their
 * bookmark. One with a screened event still ahead (a match, or a retry under way) is the claim's, not ours.
 */
const WAITING = `SELECT id, filter::text AS filter, bookmark::text AS bookmark, event_types, cursor_revision FROM subscriptions
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

interface ScreenedSubscription {
  filter: Record<string, unknown> | null;
  bookmark: string;
  event_types: string[] | null;
  cursor_revision: number;
}

/**
 * Applies a subscription's filter ahead of its delivery. The events after its bookmark are tested in
 * position order with the shared evaluator; the bookmark moves past those the filter drops, which leaves
 * no delivery record for them, and the first it keeps is marked screened, so the next prepared attempt
 * is for it. Nothing moves if the subscription's cursor was replayed or its filter changed meanwhile
 * (both bump cursor_revision): the next call tests again from the new bookmark with the new filter.
 */
@Injectable()
export class EventScreen {
  private readonly compiled = new Map<string, EventPredicate>();

  constructor(private readonly dataSource: DataSource) {}

  /** Whether an event the filter keeps is now next (or the filter is gone): an attempt is worth preparing. */
  async screen(subscriptionId: string, token: string): Promise<boolean> {
    for (let round = 0; round < SCREEN_ROUNDS; round++) {
      const [sub]: ScreenedSubscription[] = await this.dataSource.query(
        `SELECT filter, bookmark::text AS bookmark, event_types, cursor_revision FROM subscriptions WHERE id = $1 AND lease_token = $2`,
        [subscriptionId, token],
      );
      if (!sub) return false;
      if (!sub.filter) return true;
      const holds = this.predicate(sub.filter);
      // The bigint travels as text (pos) under a name of its own: ORDER BY position must sort the column,
      // not an output named position, which would sort '10' before '9' and move the bookmark past events never tested.
      const rows: Array<{ pos: string; body: string }> = await this.dataSource.query(
        `SELECT position::text AS pos, body FROM webhook_events
         WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])) ORDER BY position LIMIT $3`,
        [sub.bookmark, sub.event_types, SCREEN_BATCH],
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
    const rows: Array<{ id: string; filter: string; bookmark: string; event_types: string[] | null; cursor_revision: number }> =
      await this.dataSource.query(WAITING);
    let waiting: PendingScreen[] = rows.map((r) => ({
      id: r.id,
      filterKey: r.filter,
      bookmark: Number(r.bookmark),
      eventTypes: r.event_types,
      revision: r.cursor_revision,
    }));
    const holds = (key: string, event: object) => this.predicate(key)(event);
    for (let round = 0; round < SHARED_ROUNDS; round++) {
      if (!waiting.length) return false;
      const start = waiting.reduce((min, w) => Math.min(min, w.bookmark), Infinity);
      const types = waiting.some((w) => !w.eventTypes) ? null : [...new Set(waiting.flatMap((w) => w.eventTypes ?? []))];
      const window: WindowEvent[] = (
        await this.dataSource.query(
          `SELECT position::text AS pos, type, body FROM webhook_events
           WHERE position > $1 AND ($2::text[] IS NULL OR type = ANY ($2::text[])) ORDER BY position LIMIT $3`,
          [start, types, SHARED_WINDOW],
        )
      ).map((r: { pos: string; type: string; body: string }) => ({ pos: Number(r.pos), type: r.type, body: r.body }));
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
      if (window.length < SHARED_WINDOW) waiting = waiting.filter((w) => w.bookmark < window[window.length - 1].pos);
    }
    return waiting.length > 0;
  }

  /** The compiled filter, cached by its text: the jsonb text for the shared screen, JSON.stringify of the object here. */
  private predicate(filter: Record<string, unknown> | string): EventPredicate {
    const key = typeof filter === 'string' ? filter : JSON.stringify(filter);
    let holds = this.compiled.get(key);
    if (!holds) {
      if (this.compiled.size >= CACHED_FILTERS) this.compiled.clear();
      holds = compileEventFilter(typeof filter === 'string' ? (JSON.parse(filter) as Record<string, unknown>) : filter);
      this.compiled.set(key, holds);
    }
    return holds;
  }
}
