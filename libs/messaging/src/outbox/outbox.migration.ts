import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox table every producing service has in its own schema. Rows are written in the same
 * transaction as the change they describe and removed once JetStream has acknowledged them.
 */
export class CreateOutbox1763800000000 implements MigrationInterface {
  name = 'CreateOutbox1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox (
        seq bigserial PRIMARY KEY,
        event_id text NOT NULL UNIQUE,
        type text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox`);
  }
}
