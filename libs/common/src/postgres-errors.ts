import { QueryFailedError } from 'typeorm';

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

/**
 * Rows of an `UPDATE ... RETURNING` or `DELETE ... RETURNING` run through EntityManager.query, which
 * answers those two commands with `[rows, rowCount]` instead of the rows alone.
 */
export function returnedRows<R>(result: unknown): R[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as R[];
  return result as R[];
}
