import { MigrationInterface, QueryRunner } from 'typeorm';

/** The stream sequence of the last event copied into webhook_events, committed with the copy itself. */
export class AddIntakeCheckpoint1763800000700 implements MigrationInterface {
  name = 'AddIntakeCheckpoint1763800000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE intake_checkpoint (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), stream_seq bigint NOT NULL)`);
    await q.query(`INSERT INTO intake_checkpoint (stream_seq) VALUES (0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE intake_checkpoint`);
  }
}
