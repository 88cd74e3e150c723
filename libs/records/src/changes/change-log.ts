import { CursorCodec, DomainError, fitPage, IdPrefix, idKey, Page, pageSize } from '@crm/common';
import { BUILT_IN_SLUGS, ChangeSlice, ChangeSliceRequest, ChangeView, ListChangesQuery, ReadableObjects, RecordChangesQuery } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { encodeTime } from 'ulid';
import { DataSource } from 'typeorm';
import { QueryBudget, QuerySettings } from '../query/query-budget';
import { CHANGE_SETTINGS } from './change-retention.job';

interface ChangeRow {
  id: string;
  object: string;
  record_id: string;
  action: ChangeView['action'];
  changed: string[];
  previous: Record<string, unknown> | null;
  current: Record<string, unknown> | null;
  actor_type: ChangeView['actor']['type'];
  actor_id: string | null;
  via: ChangeView['via'];
  request_id: string | null;
  occurred_at: Date;
}

const COLUMNS = `id, object, record_id, action, changed, previous, current, actor_type, actor_id, via, request_id, occurred_at`;

function present(row: ChangeRow): ChangeView {
  return {
    id: row.id,
    object: row.object,
    record_id: row.record_id,
    action: row.action,
    changed: row.changed,
    previous: row.previous,
    current: row.current,
    actor: { type: row.actor_type, id: row.actor_id },
    via: row.via,
    request_id: row.request_id,
    occurred_at: row.occurred_at.toISOString(),
  };
}

/** The ULID-ordered id below every change recorded at or after `instant` (ids carry their creation time). */
function firstIdAt(instant: Date): string {
  return `chg_${encodeTime(Math.max(0, Math.floor(instant.getTime())), 10).toLowerCase()}`;
}

/**
 * How far an entry's id time may run ahead of its `occurred_at`. Both are taken in the same moment, but
 * ids never go back in time (monotonic ULIDs), so after the clock is set back they stay ahead until it
 * catches up. An upper id bound this much past an instant keeps every entry recorded before it.
 */
const ID_AHEAD_MAX_MS = 60_000;

/** What a GET /changes past its budget is told to narrow. */
const CHANGES_HINT = 'Narrow it with record_id, object, actor_id or via, or a shorter created_after to created_before range.';

/** The cursor list of GET /changes; a record's history has its own, so one cannot be replayed on the other. */
export const CHANGES_LIST = 'changes';

/**
 * Reads a service's change history (docs/changes.md): one record's entries, and this service's slice of
 * the log across records. Entries are served oldest first by id, which ULIDs make creation order.
 */
@Injectable()
export class ChangeLog {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(CHANGE_SETTINGS) private readonly settings: QuerySettings,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * One record's history. A record with no entries is 404 unless `exists` says it is there (it was
   * created before history was kept), so a deleted record still answers with its history.
   */
  async forRecord(object: string, recordId: string, query: RecordChangesQuery, exists: () => Promise<boolean>, noun = 'record'): Promise<Page<ChangeView>> {
    const list = `changes:${recordId}`;
    const after = this.cursors.decode(list, query.cursor, idKey(IdPrefix.Change));
    const size = pageSize(query);
    const params: unknown[] = [object, recordId];
    const where = [`object = $1`, `record_id = $2`];
    if (after !== undefined) where.push(`id > $${params.push(after)}`);
    if (query.field) {
      where.push(
        `(changed @> ARRAY[$${params.push(query.field)}]::text[] OR EXISTS (SELECT 1 FROM unnest(changed) AS p WHERE starts_with(p, $${params.push(`${query.field}.`)})))`,
      );
    }
    const rows: ChangeRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM changes WHERE ${where.join(' AND ')} ORDER BY id LIMIT $${params.push(size + 1)}`,
      params,
    );
    if (!rows.length && after === undefined && !(await this.hasHistory(recordId)) && !(await exists())) throw DomainError.notFound(noun, recordId);
    const { items, hasMore } = fitPage(rows.slice(0, size).map(present), size, rows.length > size);
    return { data: items, has_more: hasMore, ...(hasMore ? { next_cursor: this.cursors.encode(list, items[items.length - 1].id) } : {}) };
  }

  /**
   * This service's entries matching the filters after `after`, oldest first: its part of GET /changes,
   * read under the budget of queries (QUERY_TIMEOUT_MS), or the rest of the budget `page` started.
   */
  async slice({ filters, after, limit, readable }: ChangeSliceRequest, budget = this.budget()): Promise<ChangeSlice> {
    const params: unknown[] = [];
    const where: string[] = [];
    const bind = (value: unknown) => `$${params.push(value)}`;
    if (after) where.push(`id > ${bind(after)}`);
    if (filters.object) where.push(`object = ${bind(filters.object)}`);
    if (filters.record_id) where.push(`record_id = ${bind(filters.record_id)}`);
    if (filters.actor_id) where.push(`actor_id = ${bind(filters.actor_id)}`);
    if (filters.via) where.push(`via = ${bind(filters.via)}`);
    if (readable) {
      // Only the objects the caller may read, in the statement, so the page's limit counts entries it may see.
      const customs = readable.customs ? ` OR NOT object = ANY(${bind(BUILT_IN_SLUGS)}::text[])` : '';
      where.push(`(object = ANY(${bind(readable.slugs)}::text[])${customs})`);
    }
    if (filters.created_after) {
      const instant = new Date(filters.created_after);
      // The id bound lets the primary key skip everything older; the instant is the exact filter.
      where.push(`id >= ${bind(firstIdAt(instant))}`, `occurred_at > ${bind(instant)}`);
    }
    if (filters.created_before) {
      const instant = new Date(filters.created_before);
      // As above, from the other end: without it an instant before every entry walks the whole key.
      where.push(`id < ${bind(firstIdAt(new Date(instant.getTime() + ID_AHEAD_MAX_MS)))}`, `occurred_at < ${bind(instant)}`);
    }
    const sql = `SELECT ${COLUMNS} FROM changes ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id LIMIT ${bind(limit + 1)}`;
    const rows = await budget.run(this.dataSource, (run) => run<ChangeRow>(sql, params));
    const { items, hasMore } = fitPage(rows.slice(0, limit).map(present), limit, rows.length > limit);
    return { data: items, has_more: hasMore };
  }

  /**
   * GET /changes: this service's slice merged with the other services' (`others`, asked with the same
   * filters and position), in id order. Each part returns up to a page after the cursor, so the first
   * page-size entries of their union are the next page of the whole log. The parts share one budget:
   * another service's is asked through `budget.ask`, so it spends no longer than the time left here.
   */
  async page(
    query: ListChangesQuery,
    parts: ReadonlyArray<(request: ChangeSliceRequest, budget: QueryBudget) => Promise<ChangeSlice>>,
    readable?: ReadableObjects,
  ): Promise<Page<ChangeView>> {
    const budget = this.budget();
    const after = this.cursors.decode(CHANGES_LIST, query.cursor, idKey(IdPrefix.Change));
    const limit = pageSize(query);
    const { cursor: _cursor, limit: _limit, ...filters } = query;
    const request: ChangeSliceRequest = { filters, after, limit, ...(readable ? { readable } : {}) };
    const slices = await Promise.all(parts.map((part) => part(request, budget)));
    const merged = slices.flatMap((s) => s.data).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    // A part cut short (by its page size or byte budget) has entries beyond its last: the page must stop
    // before any id that part may still hold, or the merge could skip them.
    const horizon = slices
      .filter((s) => s.has_more && s.data.length)
      .map((s) => s.data[s.data.length - 1].id)
      .sort()[0];
    const safe = horizon === undefined ? merged : merged.filter((c) => c.id <= horizon);
    const { items, hasMore } = fitPage(safe.slice(0, limit), limit, safe.length > limit || slices.some((s) => s.has_more));
    return {
      data: items,
      has_more: hasMore,
      ...(hasMore && items.length ? { next_cursor: this.cursors.encode(CHANGES_LIST, items[items.length - 1].id) } : {}),
    };
  }

  private budget(): QueryBudget {
    return new QueryBudget(this.settings.queryTimeoutMs, CHANGES_HINT);
  }

  private async hasHistory(recordId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM changes WHERE record_id = $1 LIMIT 1`, [recordId]);
    return rows.length > 0;
  }
}
