import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The identity (creation time) of the stream the intake checkpoint is a sequence of, so a stream made again
 * is noticed rather than read from the old sequence on (docs/operations.md, "Stream reset"). Nullable: the
 * running intake records it on its next start, and the previous release never reads it.
 */
export class AddIntakeCheckpointStream1766000000300 implements MigrationInterface {
  name = 'AddIntakeCheckpointStream1766000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE intake_checkpoint ADD COLUMN IF NOT EXISTS stream text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`ALTER TABLE intake_checkpoint DROP COLUMN IF EXISTS stream`);
  }
}
