import { DataSource, EntityManager } from 'typeorm';

/**
 * The current time at millisecond precision. API timestamps carry milliseconds, so stored values are cut
 * to the same precision: a client that filters with `created_after=<a created_at it was shown>` then
 * gets exactly the rows after it, never the row itself.
 */
export const NOW_MS = `date_trunc('milliseconds', now())`;

/**
 * How a write runs its transaction: on its own, or, given the transaction of an import batch, in a
 * savepoint of it (TypeORM nests transactions as savepoints), so one bad row rolls back alone.
 */
export function transactionOf(dataSource: DataSource, within?: EntityManager): <T>(work: (m: EntityManager) => Promise<T>) => Promise<T> {
  return within ? (work) => within.transaction(work) : (work) => dataSource.transaction(work);
}
