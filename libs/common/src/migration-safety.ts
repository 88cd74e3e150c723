import { QueryRunner } from 'typeorm';
import { sqlStateOf } from './postgres-errors';

/** SQLSTATE of a lock not had within lock_timeout. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * How long a migration waits for a table's lock before it gives up. An `ALTER TABLE` queued behind a long
 * reader holds every later query on the table behind it for as long as it waits; with this bound the
 * writers wait at most this long, the migration fails, and it is tried again (MIGRATION_LOCK_RETRIES).
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 5000;

/** How many times a migration run that lost its lock wait is started again, with a growing pause, before the run fails. */
export const MIGRATION_LOCK_RETRIES = 5;

export function isLockTimeout(err: unknown): boolean {
  return sqlStateOf(err) === LOCK_NOT_AVAILABLE || (err as { code?: string } | undefined)?.code === LOCK_NOT_AVAILABLE;
}

/**
 * Runs `work` with `lock_timeout` set to `ms` on the migration's connection, and sets back the value it had.
 * Inside a transaction the setting is the transaction's own (SET LOCAL) and a lock timeout fails the
 * transaction, so the caller (the migration run, migrate() in this library) starts it again; outside one
 * (a migration with `transaction = false`) `work` is tried again here up to `retries` times, so it must be
 * safe to repeat (IF NOT EXISTS, and an invalid index left by an interrupted CONCURRENTLY build dropped first).
 */
export async function withLockTimeout<T>(q: QueryRunner, ms: number, work: () => Promise<T>, retries = MIGRATION_LOCK_RETRIES): Promise<T> {
  const local = q.isTransactionActive;
  const [{ before }] = await q.query(`SELECT current_setting('lock_timeout') AS before`);
  await q.query(`SELECT set_config('lock_timeout', $1, $2)`, [`${ms}ms`, local]);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        if (local || !isLockTimeout(err) || attempt >= retries) throw err;
        await pause(attempt);
      }
    }
  } finally {
    if (!local) await q.query(`SELECT set_config('lock_timeout', $1, false)`, [before]);
  }
}

/** 0.5 s, 1 s, 2 s, … between attempts, so a long reader has time to finish. */
export function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
}

/**
 * A backfill in batches: `UPDATE table SET set WHERE where` on at most `batch` rows a statement, each in a
 * transaction of its own, until none is left, so no lock is held on the whole table and the WAL goes out
 * in small pieces. `where` must stop matching a row once it is updated (`x IS NULL` for a new column), or
 * the loop never ends. For a migration with `transaction = false`; `progress` hears the rows done so far.
 */
export async function updateInBatches(
  q: QueryRunner,
  table: string,
  set: string,
  where: string,
  { batch = 5000, progress }: { batch?: number; progress?: (done: number) => void } = {},
): Promise<number> {
  let done = 0;
  for (;;) {
    const result = await withLockTimeout(q, MIGRATION_LOCK_TIMEOUT_MS, () =>
      q.query(`UPDATE ${table} SET ${set} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ${batch} FOR UPDATE))`, [], true),
    );
    const count = (result as { affected?: number }).affected ?? 0;
    done += count;
    progress?.(done);
    // A row a writer moved meanwhile (a new ctid) is missed by its batch; only an empty look-up ends the loop.
    if (count === 0 && !(await q.query(`SELECT EXISTS (SELECT 1 FROM ${table} WHERE ${where}) AS left`))[0].left) return done;
  }
}
