import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateActivities1763800001200 implements MigrationInterface {
  name = 'CreateActivities1763800001200';

  async up(q: QueryRunner): Promise<void> {
    // deal_id points into the deals service's schema, so it is checked over NATS rather than by a foreign key.
    await q.query(`
      CREATE TABLE activities (
        id text PRIMARY KEY,
        type text NOT NULL CHECK (type IN ('email', 'call', 'meeting', 'note')),
        status text NOT NULL CHECK (status IN ('planned', 'completed', 'cancelled')),
        subject text,
        body text,
        occurred_at timestamptz NOT NULL,
        contact_id text REFERENCES contacts (id),
        deal_id text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE INDEX activities_contact_id ON activities (contact_id, id)`);
    await q.query(`CREATE INDEX activities_deal_id ON activities (deal_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE activities`);
  }
}
