import { compileEventFilter, eventFilterCost, EventPredicate } from '@crm/common';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** What screening needs of a subscription: its filter (canonical jsonb text, and compiled) and its event types. */
export interface FilterDefinition {
  revision: number;
  /** The filter's jsonb text, shared by every subscription with the same filter; null when it has none. */
  filterKey: string | null;
  eventTypes: string[] | null;
  holds: EventPredicate | null;
  /** The filter's conditions: what testing one event with it costs (0 without one). */
  cost: number;
}

/** Definitions kept; past this the map starts over (deleted subscriptions' entries go with it). */
const CACHED_DEFINITIONS = 20_000;
/** Compiled filters kept, by their JSON: subscriptions sharing a filter share its predicate. */
const CACHED_FILTERS = 5_000;

/**
 * The filters and event types of subscriptions, read once per change instead of on every look for work.
 * An entry is keyed by the subscription's id and cursor_revision: every change of filter or event types
 * bumps the revision (as does a replay), ids are never reused, and a definition is only ever asked for at
 * the revision the caller just read with the subscription's bookmark. So an entry can never be stale for
 * the question asked, on this replica or any other, and nothing has to announce a change: a revision the
 * cache does not hold is read, and one read at another revision (changed meanwhile) is not answered.
 */
@Injectable()
export class SubscriptionFilters {
  private readonly byId = new Map<string, FilterDefinition>();
  private readonly compiled = new Map<string, EventPredicate>();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * The definitions of these subscriptions at these revisions, reading in one statement those not held. A
   * subscription whose revision moved on (or that was deleted) since the caller read it is left out.
   */
  async at(wanted: ReadonlyArray<{ id: string; revision: number }>): Promise<Map<string, FilterDefinition>> {
    const missing = wanted.filter((w) => this.byId.get(w.id)?.revision !== w.revision).map((w) => w.id);
    if (missing.length) {
      const rows: Array<{ id: string; filter: string | null; event_types: string[] | null; cursor_revision: number }> = await this.dataSource.query(
        `SELECT id, filter::text AS filter, event_types, cursor_revision FROM subscriptions WHERE id = ANY ($1::text[])`,
        [missing],
      );
      if (this.byId.size + rows.length > CACHED_DEFINITIONS) this.byId.clear();
      for (const r of rows) {
        this.byId.set(r.id, {
          revision: r.cursor_revision,
          filterKey: r.filter,
          eventTypes: r.event_types,
          holds: r.filter === null ? null : this.predicate(r.filter),
          cost: r.filter === null ? 0 : eventFilterCost(JSON.parse(r.filter)),
        });
      }
    }
    const found = new Map<string, FilterDefinition>();
    for (const w of wanted) {
      const definition = this.byId.get(w.id);
      if (definition?.revision === w.revision) found.set(w.id, definition);
    }
    return found;
  }

  /** A deleted subscription's entry, dropped by the replica that deleted it (others drop theirs when the map starts over). */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** The compiled filter of a filter's jsonb text. */
  predicate(filterKey: string): EventPredicate {
    let holds = this.compiled.get(filterKey);
    if (!holds) {
      if (this.compiled.size >= CACHED_FILTERS) this.compiled.clear();
      holds = compileEventFilter(JSON.parse(filterKey) as Record<string, unknown>);
      this.compiled.set(filterKey, holds);
    }
    return holds;
  }
}
