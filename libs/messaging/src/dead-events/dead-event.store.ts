import { notifySql } from '../pg-notifications';
import { DomainEvent } from '@crm/contracts';

/** Anything that runs SQL: a TypeORM DataSource or EntityManager, or a pg client wrapped to answer rows. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<any>;
}

/** An event a consumer gave up on, as stored in the service's `dead_events` table. */
export interface DeadEvent {
  id: string;
  consumer: string;
  event: DomainEvent;
  /** The event's place in the JetStream stream, for consumers that read by sequence. */
  seq: number | null;
  error: string;
  attempts: number;
  parkedAt: Date;
  /** Set by an operator's retry request; the service replays the event and clears the row. */
  retryRequestedAt: Date | null;
}

export interface ParkRequest {
  consumer: string;
  event: DomainEvent;
  seq?: number;
  error: string;
  attempts: number;
}

/** Stored errors are for an operator to read, not a dump: one line, bounded. */
const ERROR_MAX_CHARS = 1000;

export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.replace(/\s+/g, ' ').slice(0, ERROR_MAX_CHARS);
}

interface Row {
  id: string;
  consumer: string;
  event: DomainEvent;
  stream_seq: string | null;
  error: string;
  attempts: number;
  parked_at: Date;
  retry_requested_at: Date | null;
}

const COLUMNS = `id::text, consumer, event, stream_seq::text, error, attempts, parked_at, retry_requested_at`;

function fromRow(row: Row): DeadEvent {
  return {
    id: row.id,
    consumer: row.consumer,
    event: row.event,
    seq: row.stream_seq === null ? null : Number(row.stream_seq),
    error: row.error,
    attempts: row.attempts,
    parkedAt: row.parked_at,
    retryRequestedAt: row.retry_requested_at,
  };
}

/**
 * Parks one event, in the caller's transaction when given its manager. Parking the same event for the
 * same consumer again (a retry that failed too) keeps one row and adds up the attempts.
 */
export async function parkEvent(db: Queryable, p: ParkRequest): Promise<void> {
  await db.query(
    `INSERT INTO dead_events (consumer, event_id, event_type, stream_seq, event, error, attempts)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (consumer, event_id) DO UPDATE SET error = excluded.error, attempts = dead_events.attempts + excluded.attempts,
       parked_at = now(), retry_requested_at = NULL`,
    [p.consumer, p.event.id, p.event.type, p.seq ?? null, JSON.stringify(p.event), p.error.slice(0, ERROR_MAX_CHARS), p.attempts],
  );
}

/** Parked events, oldest first; of one consumer when named. */
export async function listDeadEvents(db: Queryable, options: { consumer?: string; limit?: number } = {}): Promise<DeadEvent[]> {
  const rows: Row[] = await db.query(`SELECT ${COLUMNS} FROM dead_events WHERE ($1::text IS NULL OR consumer = $1) ORDER BY id LIMIT $2`, [
    options.consumer ?? null,
    options.limit ?? 1000,
  ]);
  return rows.map(fromRow);
}

/** How many events each consumer has parked. */
export async function countDeadEvents(db: Queryable): Promise<Record<string, number>> {
  const rows: Array<{ consumer: string; count: number }> = await db.query(
    `SELECT consumer, count(*)::int AS count FROM dead_events GROUP BY consumer ORDER BY consumer`,
  );
  return Object.fromEntries(rows.map((r) => [r.consumer, r.count]));
}

/** The notification that wakes the service's replicas for a retry request (sent once per marked row; PostgreSQL folds them into one per transaction). */
export const RETRY_CHANNEL = 'dead_events_retry';

/** Asks the service to replay parked events: the given ids, or all of one consumer, or all. Answers the ids marked. */
export async function requestRetry(db: Queryable, target: { ids?: string[]; consumer?: string }): Promise<string[]> {
  const rows: Array<{ id: string }> = await db.query(
    `WITH marked AS (
       UPDATE dead_events SET retry_requested_at = now()
       WHERE ($1::bigint[] IS NULL OR id = ANY($1::bigint[])) AND ($2::text IS NULL OR consumer = $2)
       RETURNING id)
     SELECT id::text, ${notifySql(RETRY_CHANNEL)} FROM marked ORDER BY marked.id`,
    [target.ids ?? null, target.consumer ?? null],
  );
  return rows.map((r) => r.id);
}

/** Retry requests of the given consumers, locked for this transaction so one replica replays each. */
export async function claimRetries(db: Queryable, consumers: string[], limit = 50): Promise<DeadEvent[]> {
  const rows: Row[] = await db.query(
    `SELECT ${COLUMNS} FROM dead_events WHERE retry_requested_at IS NOT NULL AND consumer = ANY($1::text[])
     ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [consumers, limit],
  );
  return rows.map(fromRow);
}

export async function releaseRetried(db: Queryable, id: string): Promise<void> {
  await db.query(`DELETE FROM dead_events WHERE id = $1`, [id]);
}

export async function retryFailed(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(`UPDATE dead_events SET error = $2, attempts = attempts + 1, parked_at = now(), retry_requested_at = NULL WHERE id = $1`, [
    id,
    error.slice(0, ERROR_MAX_CHARS),
  ]);
}
