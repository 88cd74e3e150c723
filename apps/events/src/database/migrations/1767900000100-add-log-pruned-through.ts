import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The highest position the retention sweep has deleted, so a cursor before it is known to point into history
 * the log no longer holds (`410 cursor_expired`, docs/events.md) rather than silently resuming later. A column
 * with a constant default: no rewrite of the one-row table; the previous release never reads it.
 */
export class AddLogPrunedThrough1767900000100 implements MigrationInterface {
  name = 'AddLogPrunedThrough1767900000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE log_checkpoint ADD COLUMN IF NOT EXISTS pruned_through bigint NOT NULL DEFAULT 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE log_checkpoint DROP COLUMN IF EXISTS pruned_through`);
  }
}
