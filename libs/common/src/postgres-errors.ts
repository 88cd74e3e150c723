import { QueryFailedError } from 'typeorm';
import { DomainError, ErrorCode } from '@crm/contracts';

interface PgError {
  code?: string;
  constraint?: string;
}

function pgError(err: unknown): PgError | undefined {
  if (!(err instanceof QueryFailedError)) return undefined;
  return (err as QueryFailedError & { driverError?: PgError }).driverError;
}

/** A unique index rejected the write (23505), optionally a specific one. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pg = pgError(err);
  return pg?.code === '23505' && (constraint === undefined || pg.constraint === constraint);
}

/** A foreign key rejected the write (23503): the referenced row was removed, or is still referenced. */
export function isForeignKeyViolation(err: unknown): boolean {
  return pgError(err)?.code === '23503';
}

/** The SQLSTATE a statement failed with, if it reached PostgreSQL. */
export function sqlStateOf(err: unknown): string | undefined {
  return pgError(err)?.code;
}

/**
 * A data exception (SQLSTATE class 22): PostgreSQL could not take a value as its type (a date that is not
 * one, a number out of range, a NUL in text). In a request handler the values a statement binds are the
 * request's, so this is the client's mistake, answered by invalidInput, not a fault of ours.
 */
export function isDataException(err: unknown): boolean {
  return /^22[0-9A-Z]{3}$/.test(sqlStateOf(err) ?? '');
}

/** The 400 for a data exception; neither PostgreSQL's message nor the statement reaches the client. */
export function invalidInput(): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, 'A value in the request is not valid for its type.');
}

/** The statement ran past its statement_timeout (57014). */
export function isQueryCanceled(err: unknown): boolean {
  return pgError(err)?.code === '57014';
}

/**
 * Rows of an `UPDATE ... RETURNING` or `DELETE ... RETURNING` run through EntityManager.query, which
 * answers those two commands with `[rows, rowCount]` instead of the rows alone.
 */
export function returnedRows<R>(result: unknown): R[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as R[];
  return result as R[];
}

/** Socket errors of a connection that could not be made or was cut. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server that is going away, starting or full (class 08 is checked by prefix). */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** What the pg driver and TypeORM say, without a code, when the server vanished under them. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|Connection ended unexpectedly|timeout exceeded when trying to connect|Client has encountered a connection error|Driver not Connected|Client was closed and is not queryable|Cannot use a pool after calling end/i;

/**
 * The database could not be reached or went away (refused, cut, shutting down, starting up, out of
 * connections): a transient outage, answered 503, not a bug. Looks through TypeORM's wrapper and
 * error causes.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (CONNECTION_ERRNOS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true; // AggregateError (IPv4 and IPv6 refused)
  return isDatabaseUnavailable(e.driverError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}

/** The 503 a request gets while its database is unreachable. */
export function databaseUnavailable(): DomainError {
  return new DomainError(ErrorCode.ServiceUnavailable, 'The database is unavailable; try again shortly.');
}
