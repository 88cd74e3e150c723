import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows stay after JetStream acknowledged them, until the event log and the webhook intake have read
 * past them (docs/events.md, "The relay"): a row records the stream it went to (the stream's creation time,
 * its identity) and the sequence JetStream stored it at. Both nullable: null is "not published yet", and
 * the previous release, which deletes what JetStream acknowledged and never reads them, keeps working (it
 * publishes again the rows it finds marked, which the stream and the log recognise by event id).
 */
export class AddOutboxPublished1766000000000 implements MigrationInterface {
  name = 'AddOutboxPublished1766000000000';

  async up(q: QueryRunner): Promise<void> {
    // Adding nullable columns only rewrites the catalog, but it needs the table's lock for a moment: a
    // migration that cannot get it in 5 s fails (and runs again at the next start) instead of queueing writers.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE outbox ADD COLUMN IF NOT EXISTS published_stream text, ADD COLUMN IF NOT EXISTS published_seq bigint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE outbox DROP COLUMN IF EXISTS published_seq, DROP COLUMN IF EXISTS published_stream`);
  }
}

/** The relay's read of what is left to publish, and the delete of what the readers passed, each by its own partial index. */
export const OUTBOX_UNPUBLISHED_INDEX = 'outbox_unpublished';
export const OUTBOX_PUBLISHED_INDEX = 'outbox_published';

/**
 * The two partial indexes the relay reads by, built CONCURRENTLY (so outside a transaction) so that writers
 * never wait on the build. The previous release reads neither.
 */
export class IndexOutboxPublished1766000000100 implements MigrationInterface {
  name = 'IndexOutboxPublished1766000000100';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '5s'`);
    try {
      for (const [name, definition] of [
        [OUTBOX_UNPUBLISHED_INDEX, `(seq) WHERE published_seq IS NULL`],
        [OUTBOX_PUBLISHED_INDEX, `(published_stream, published_seq) WHERE published_seq IS NOT NULL`],
      ]) {
        // An interrupted CONCURRENTLY build leaves an invalid index behind, which IF NOT EXISTS would keep.
        const invalid: unknown[] = await q.query(
          `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
          [name],
        );
        if (invalid.length) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
        await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON outbox ${definition}`);
      }
    } finally {
      // The connection goes back to the pool.
      await q.query(`RESET lock_timeout`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '5s'`);
    try {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${OUTBOX_PUBLISHED_INDEX}`);
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${OUTBOX_UNPUBLISHED_INDEX}`);
    } finally {
      await q.query(`RESET lock_timeout`);
    }
  }
}
