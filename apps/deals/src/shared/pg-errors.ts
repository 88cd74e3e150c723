import { QueryFailedError } from 'typeorm';

/** The SQLSTATE and constraint of a PostgreSQL error, when `err` is one. */
export function pgError(err: unknown): { code?: string; constraint?: string } {
  if (!(err instanceof QueryFailedError)) return {};
  const driverError = (err as QueryFailedError & { driverError?: { code?: string; constraint?: string } }).driverError;
  return { code: driverError?.code, constraint: driverError?.constraint };
}

export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';
