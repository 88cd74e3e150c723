import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who made each change, through which channel and request (docs/events.md). Nullable: events logged
 * before their producers stamped an origin have none, and the log keeps them as they were.
 */
export class AddEventOrigin1764600000100 implements MigrationInterface {
  name = 'AddEventOrigin1764600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN actor jsonb, ADD COLUMN via text, ADD COLUMN request_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP COLUMN actor, DROP COLUMN via, DROP COLUMN request_id`);
  }
}
