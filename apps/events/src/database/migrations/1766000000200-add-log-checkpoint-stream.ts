import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The identity (creation time) of the stream the log's checkpoint is a sequence of, so a stream made again
 * is noticed rather than read from the old sequence on (docs/operations.md, "Stream reset"). Nullable: the
 * running log records it on its next start, and the previous release never reads it.
 */
export class AddLogCheckpointStream1766000000200 implements MigrationInterface {
  name = 'AddLogCheckpointStream1766000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE log_checkpoint ADD COLUMN IF NOT EXISTS stream text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE log_checkpoint DROP COLUMN IF EXISTS stream`);
  }
}
