/** Anything that runs SQL: a migration's QueryRunner, an EntityManager inside a transaction. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** Runs one batch in a transaction (a migration is one already; the CLI opens one per batch). */
export type BatchRunner = <T>(work: (db: Queryable) => Promise<T>) => Promise<T>;

/** Columns of `subscriptions` that hold a signing secret as stored (sealed, or plain text before encryption at rest). */
export type SecretColumn = 'secret' | 'previous_secret';

const BATCH = 500;

/**
 * Walks every subscription in id order, in batches whose rows are locked while they are rewritten, and
 * stores `rewrite(id, stored)` where it returns a new value. Returns how many values changed.
 */
export async function rewriteSecrets(
  runBatch: BatchRunner,
  column: SecretColumn,
  rewrite: (subscriptionId: string, stored: string) => string | undefined,
): Promise<number> {
  let after = '';
  let changed = 0;
  for (;;) {
    const { last, updated } = await runBatch(async (db) => {
      const rows = (await db.query(
        `SELECT id, ${column} AS stored FROM subscriptions WHERE id > $1 AND ${column} IS NOT NULL ORDER BY id LIMIT ${BATCH} FOR UPDATE`,
        [after],
      )) as { id: string; stored: string }[];
      const ids: string[] = [];
      const values: string[] = [];
      for (const row of rows) {
        const next = rewrite(row.id, row.stored);
        if (next === undefined || next === row.stored) continue;
        ids.push(row.id);
        values.push(next);
      }
      if (ids.length) {
        await db.query(`UPDATE subscriptions s SET ${column} = u.stored FROM unnest($1::text[], $2::text[]) AS u(id, stored) WHERE s.id = u.id`, [ids, values]);
      }
      return { last: rows.length === BATCH ? rows[rows.length - 1].id : undefined, updated: ids.length };
    });
    changed += updated;
    if (last === undefined) return changed;
    after = last;
  }
}

/** Every column that holds a stored signing secret. */
export const SECRET_COLUMNS: readonly SecretColumn[] = ['secret', 'previous_secret'];
