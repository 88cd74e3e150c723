import {
  checkedEventFilter,
  CursorCodec,
  DomainError,
  ErrorCode,
  eventFilterCost,
  eventPathResolver,
  EventPredicate,
  fitPage,
  Page,
  pageSize,
  positionKey,
} from '@crm/common';
import {
  ChangeActor,
  ChangeVia,
  EVENT_TYPES,
  EventQueryDto,
  eventTypeReads,
  EventView,
  firstUnread,
  forbiddenRead,
  ListEventsQuery,
  ReadableEvents,
  readableEvents,
  RequestContext,
} from '@crm/contracts';
import { QueryBudget, RunStatement } from '@crm/records';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EventTypeFilter, parseEventTypeFilter } from './event-type-filter';
import { EVENTS_SETTINGS, EventsSettings } from './events.settings';
import { filterPrescreen } from './filter-prescreen';

interface Row {
  /** Whether the caller may read it (readableEvents); always true for a caller who may read everything. */
  visible?: boolean;
  /** The bigint position as text; named apart from the column so ORDER BY sorts the number. */
  pos: string;
  id: string;
  type: string;
  occurred_at: Date;
  actor: ChangeActor | null;
  via: ChangeVia | null;
  request_id: string | null;
  data: Record<string, unknown>;
}

export const EVENTS_LIST = 'events';
/** What a read of the log past its budget (QueryBudget) is told to change. */
export const EVENTS_HINT =
  'Narrow it: name event types (type=...), start from a later cursor, or filter on type, via, request_id or an equality of a data path.';
/** Events read per statement while a filter is tested. */
const SCAN_CHUNK = 500;

/** Events logged before producers stamped an origin show null actor, via and request_id. */
function present(r: Row): EventView {
  return { id: r.id, type: r.type, occurred_at: r.occurred_at.toISOString(), actor: r.actor, via: r.via, request_id: r.request_id, data: r.data };
}

/** GET /events's filter arrives as URL-encoded JSON; it must be a JSON object. */
function parseFilterParameter(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    const message = 'filter must be a JSON object (URL-encoded), e.g. {"data.current.status":"won"}';
    throw new DomainError(ErrorCode.ValidationFailed, message, [{ field: 'filter', code: 'invalid_value', message }]);
  }
  return parsed as Record<string, unknown>;
}

/** The event types a `type` parameter covers, for checking a filter's data paths; null for every type. */
function typesOf(filter: EventTypeFilter | undefined): string[] | null {
  if (!filter) return null;
  return EVENT_TYPES.filter((t) => filter.types.includes(t) || filter.prefixes.some((p) => t.startsWith(p)));
}

/** An exact type the caller can see no event of is refused, naming the permission; a prefix covers what it may read. */
function assertReadableTypes(ctx: RequestContext, types: EventTypeFilter | undefined, readable: ReadableEvents): void {
  for (const type of types?.types ?? []) {
    if (readable.types.includes(type) || (type.startsWith('object_record.') && readable.objects.length)) continue;
    const missing = firstUnread(ctx.readable, eventTypeReads([type]));
    if (missing) throw forbiddenRead(missing, `reading ${type} events`);
  }
}

/**
 * A cursor before the highest position the retention sweep deleted would resume past events it never saw:
 * refused with `410 cursor_expired` instead (docs/events.md, "Retention"). Read in the page's own snapshot.
 */
async function assertKept(m: RunStatement, after: number): Promise<void> {
  const [kept] = await m<{ pruned_through: string }>(`SELECT pruned_through::text FROM log_checkpoint`, []);
  const prunedThrough = Number(kept?.pruned_through ?? 0);
  if (after >= prunedThrough) return;
  throw new DomainError(
    ErrorCode.CursorExpired,
    'The cursor points before events the log no longer keeps (EVENTS_RETENTION_DAYS); start again without a cursor, from the oldest event kept.',
    [{ field: 'cursor', code: 'cursor_expired', message: 'events after this cursor were deleted by the retention period' }],
  );
}

/** Reads the log for GET /events and POST /events/query. */
@Injectable()
export class EventsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
  ) {}

  async list(ctx: RequestContext, query: ListEventsQuery): Promise<Page<EventView> & { next_cursor: string }> {
    return this.read(ctx, { ...query, filter: parseFilterParameter(query.filter) });
  }

  async query(ctx: RequestContext, body: EventQueryDto): Promise<Page<EventView> & { next_cursor: string }> {
    return this.read(ctx, body);
  }

  /**
   * Events after the cursor in log order. `next_cursor` is always present: after the last event
   * served, or, when a page ends the log, at the log's head as seen by this read, so a filtered poller
   * does not rescan events it skipped. Positions become visible in increasing order (see the writer),
   * so resuming from the head can never miss an event committed later.
   *
   * With a filter, a page tests at most EVENTS_FILTER_SCAN_LIMIT events: when that many held fewer matches
   * than the limit, it answers those with has_more true and a cursor after the last event it tested.
   * A caller who may not read every object (ctx.readable) is read the same way: its events are the
   * filter, tested by the statements themselves (readableEvents), so a page of a sparse log still ends.
   */
  private async read(ctx: RequestContext, query: EventQueryDto): Promise<Page<EventView> & { next_cursor: string }> {
    const after = this.cursors.decode(EVENTS_LIST, query.cursor, positionKey) ?? 0;
    const types = parseEventTypeFilter(query.type);
    const readable = readableEvents(ctx.readable);
    if (readable) assertReadableTypes(ctx, types, readable);
    const filter = query.filter ? checkedEventFilter(query.filter, eventPathResolver(typesOf(types))) : undefined;
    const holds = filter ?? (readable ? () => true : undefined);
    const size = pageSize(query);
    const budget = new QueryBudget(this.settings.queryTimeoutMs, EVENTS_HINT);
    return budget.run(
      this.dataSource,
      async (m) => {
        if (query.cursor) await assertKept(m, after);
        const { rows, examinedTo, exhausted } = holds
          ? await this.scan(m, after, types, holds, size, this.scanLimit(query.filter), readable, query.filter)
          : await this.chunk(m, after, types, size + 1);
        const fitted = fitPage(rows.map(present), size, rows.length > size);
        const hasMore = fitted.hasMore || (!!holds && !exhausted);
        let resumeAt = fitted.hasMore ? Number(rows[fitted.items.length - 1].pos) : Math.max(examinedTo, after);
        if (!hasMore) {
          const [{ head }] = await m<{ head: string }>(`SELECT coalesce(max(position), 0)::text AS head FROM events`, []);
          resumeAt = Math.max(resumeAt, Number(head));
        }
        return { data: fitted.items, has_more: hasMore, next_cursor: this.cursors.encode(EVENTS_LIST, resumeAt) };
      },
      {},
      { repeatable: true },
    );
  }

  /**
   * Up to `count` events after `after` of the chosen types, in order, with the position of the last one read.
   * With `readable`, each row says whether the caller may read it, and only those carry their data.
   */
  private async chunk(m: RunStatement, after: number, types: EventTypeFilter | undefined, count: number, readable?: ReadableEvents, narrow?: Narrowing) {
    const params: unknown[] = [String(after), count];
    let where = 'position > $1' + typeCondition(types, params);
    if (narrow) {
      where += ` AND position <= $${params.push(String(narrow.upTo))}`;
      for (const condition of filterPrescreen(narrow.filter, (v) => `$${params.push(v)}`)) where += ` AND ${condition}`;
    }
    let columns = 'data';
    if (readable) {
      const visible = `(type = ANY($${params.push(readable.types)}::text[]) OR (type LIKE 'object_record.%' AND data->>'object' = ANY($${params.push(readable.objects)}::text[])))`;
      columns = `${visible} AS visible, CASE WHEN ${visible} THEN data END AS data`;
    }
    const rows = await m<Row>(
      `SELECT position::text AS pos, id, type, occurred_at, actor, via, request_id, ${columns} FROM events WHERE ${where} ORDER BY position LIMIT $2`,
      params,
    );
    return { rows, examinedTo: rows.length ? Number(rows[rows.length - 1].pos) : after, exhausted: rows.length < count };
  }

  /**
   * Tests events in order until `size + 1` hold, the log ends, or EVENTS_FILTER_SCAN_LIMIT were examined. When
   * the filter has conditions PostgreSQL can pre-screen (filterPrescreen), the window of events examined is
   * fixed first (the next EVENTS_FILTER_SCAN_LIMIT of the chosen types, as without it) and only the rows in it
   * that pass the pre-screen are read and tested; the bound and the cursor are the same as without.
   */
  private async scan(
    m: RunStatement,
    after: number,
    types: EventTypeFilter | undefined,
    holds: EventPredicate,
    size: number,
    limit: number,
    readable?: ReadableEvents,
    filter?: Record<string, unknown>,
  ) {
    if (filter && filterPrescreen(filter, () => '').length) return this.prescreenedScan(m, after, types, holds, size, limit, filter, readable);
    const matched: Row[] = [];
    let examined = 0;
    let at = after;
    while (examined < limit) {
      const { rows, examinedTo, exhausted } = await this.chunk(m, at, types, Math.min(SCAN_CHUNK, limit - examined), readable);
      for (const row of rows) {
        examined++;
        at = Number(row.pos);
        if (row.visible !== false && holds(present(row))) matched.push(row);
        if (matched.length > size) return { rows: matched, examinedTo: at, exhausted: false };
      }
      if (exhausted) return { rows: matched, examinedTo: Math.max(at, examinedTo), exhausted: true };
    }
    return { rows: matched, examinedTo: at, exhausted: false };
  }

  /**
   * The most events one page tests: EVENTS_FILTER_SCAN_LIMIT, fewer for a filter whose conditions would
   * make that many tests cost more than EVENTS_FILTER_SCAN_COST. Charged on every event of the window,
   * pre-screened or not, so a page's cost does not depend on what PostgreSQL could drop.
   */
  private scanLimit(filter: Record<string, unknown> | undefined): number {
    const conditions = Math.max(1, eventFilterCost(filter));
    return Math.max(1, Math.min(this.settings.filterScanLimit, Math.floor(this.settings.filterScanCost / conditions)));
  }

  private async prescreenedScan(
    m: RunStatement,
    after: number,
    types: EventTypeFilter | undefined,
    holds: EventPredicate,
    size: number,
    limit: number,
    filter: Record<string, unknown>,
    readable?: ReadableEvents,
  ) {
    const params: unknown[] = [String(after), limit];
    const where = 'position > $1' + typeCondition(types, params);
    const [window] = await m<{ examined: number; last: string | null }>(
      `SELECT count(*)::int AS examined, max(position)::text AS last FROM (SELECT position FROM events WHERE ${where} ORDER BY position LIMIT $2) w`,
      params,
    );
    const exhausted = window.examined < limit;
    if (window.last === null) return { rows: [], examinedTo: after, exhausted };
    const upTo = Number(window.last);
    const matched: Row[] = [];
    let at = after;
    for (;;) {
      const { rows } = await this.chunk(m, at, types, SCAN_CHUNK, readable, { upTo, filter });
      for (const row of rows) {
        at = Number(row.pos);
        if (row.visible !== false && holds(present(row))) matched.push(row);
        if (matched.length > size) return { rows: matched, examinedTo: at, exhausted: false };
      }
      if (rows.length < SCAN_CHUNK) return { rows: matched, examinedTo: upTo, exhausted };
    }
  }
}

/** The window a pre-screened chunk stays in (the events the page examines) and the filter whose pre-screen narrows it. */
interface Narrowing {
  upTo: number;
  filter: Record<string, unknown>;
}

/** The `type` parameter as SQL (an exact type or a prefix), its values appended to `params`. */
function typeCondition(types: EventTypeFilter | undefined, params: unknown[]): string {
  if (!types) return '';
  return ` AND (type = ANY($${params.push(types.types)}::text[]) OR type LIKE ANY($${params.push(types.prefixes.map((p) => `${p}%`))}::text[]))`;
}
