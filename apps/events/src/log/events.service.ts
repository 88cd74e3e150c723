import { CursorCodec, fitPage, Page, pageSize, positionKey } from '@crm/common';
import { ChangeActor, ChangeVia, EventView, ListEventsQuery } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { parseEventTypeFilter } from './event-type-filter';

interface Row {
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

/** Events logged before producers stamped an origin show null actor, via and request_id. */
function present(r: Row): EventView {
  return { id: r.id, type: r.type, occurred_at: r.occurred_at.toISOString(), actor: r.actor, via: r.via, request_id: r.request_id, data: r.data };
}

/** Reads the log for GET /events. */
@Injectable()
export class EventsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * Events after the cursor in log order. `next_cursor` is always present: after the last event
   * served, or, when a page ends the log, at the log's head as seen by this read, so a filtered poller
   * does not rescan events it skipped. Positions become visible in increasing order (see the writer),
   * so resuming from the head can never miss an event committed later.
   */
  async list(query: ListEventsQuery): Promise<Page<EventView> & { next_cursor: string }> {
    const after = this.cursors.decode(EVENTS_LIST, query.cursor, positionKey) ?? 0;
    const filter = parseEventTypeFilter(query.type);
    const size = pageSize(query);
    return this.dataSource.transaction('REPEATABLE READ', async (m) => {
      const params: unknown[] = [String(after), size + 1];
      let where = 'position > $1';
      if (filter) {
        params.push(
          filter.types,
          filter.prefixes.map((p) => `${p}%`),
        );
        where += ` AND (type = ANY($3::text[]) OR type LIKE ANY($4::text[]))`;
      }
      const rows: Row[] = await m.query(
        `SELECT position::text AS pos, id, type, occurred_at, actor, via, request_id, data FROM events WHERE ${where} ORDER BY position LIMIT $2`,
        params,
      );
      const fitted = fitPage(rows.map(present), size, rows.length > size);
      const hasMore = fitted.hasMore;
      let resumeAt = fitted.items.length ? Number(rows[fitted.items.length - 1].pos) : after;
      if (!hasMore) {
        const [{ head }] = await m.query(`SELECT coalesce(max(position), 0)::text AS head FROM events`);
        resumeAt = Math.max(resumeAt, Number(head));
      }
      return { data: fitted.items, has_more: hasMore, next_cursor: this.cursors.encode(EVENTS_LIST, resumeAt) };
    });
  }
}
