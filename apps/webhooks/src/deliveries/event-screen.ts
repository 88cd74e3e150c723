import { compileEventFilter, EventPredicate } from '@crm/common';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Events tested per statement, and statements per call: a call tests at most 10,000 before it gives its slot up. */
const SCREEN_BATCH = 500;
const SCREEN_ROUNDS = 20;
/** Compiled filters kept, by their JSON; a subscription's filter is compiled once, not per event. */
const CACHED_FILTERS = 5_000;

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

  private predicate(filter: Record<string, unknown>): EventPredicate {
    const key = JSON.stringify(filter);
    let holds = this.compiled.get(key);
    if (!holds) {
      if (this.compiled.size >= CACHED_FILTERS) this.compiled.clear();
      holds = compileEventFilter(filter);
      this.compiled.set(key, holds);
    }
    return holds;
  }
}
