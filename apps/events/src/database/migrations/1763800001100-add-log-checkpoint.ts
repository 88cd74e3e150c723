import { MigrationInterface, QueryRunner } from 'typeorm';

/** The stream sequence of the last event written to the log, committed with the events themselves. */
export class AddLogCheckpoint1763800001100 implements MigrationInterface {
  name = 'AddLogCheckpoint1763800001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE log_checkpoint (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), stream_seq bigint NOT NULL)`);
    await q.query(`INSERT INTO log_checkpoint (stream_seq) VALUES (0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_checkpoint`);
  }
}
