import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The change history every service that keeps records has in its own schema. Entries are written in the
 * transaction of the change (OutboxService.record), so neither can exist without the other.
 */
export class CreateChanges1764600000000 implements MigrationInterface {
  name = 'CreateChanges1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE changes (
        id text PRIMARY KEY,
        object text NOT NULL,
        record_id text NOT NULL,
        action text NOT NULL,
        changed text[] NOT NULL,
        previous jsonb,
        current jsonb,
        actor_type text NOT NULL,
        actor_id text,
        via text NOT NULL,
        request_id text,
        occurred_at timestamptz NOT NULL
      )`);
    // Ids are ULIDs, so each index's id column keeps entries oldest first: one record's history, one
    // actor's changes and one object's changes are each a range scan.
    await q.query(`CREATE INDEX changes_record ON changes (record_id, id)`);
    await q.query(`CREATE INDEX changes_actor ON changes (actor_id, id) WHERE actor_id IS NOT NULL`);
    await q.query(`CREATE INDEX changes_object ON changes (object, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE changes`);
  }
}
