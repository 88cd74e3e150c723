import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ordered event log. `position` comes from a sequence drawn only while holding the log's writer
 * lock, so positions become visible in increasing order and a reader never sees a later event before
 * an earlier one.
 */
export class CreateEventLog1763800001000 implements MigrationInterface {
  name = 'CreateEventLog1763800001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE event_position AS bigint`);
    await q.query(`
      CREATE TABLE events (
        position bigint PRIMARY KEY,
        id text NOT NULL UNIQUE,
        type text NOT NULL,
        occurred_at timestamptz NOT NULL,
        data jsonb NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX events_type_position ON events (type, position)`);
    await q.query(`CREATE INDEX events_recorded_at ON events (recorded_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP SEQUENCE event_position`);
  }
}
