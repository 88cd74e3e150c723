import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateTasks1763800001300 implements MigrationInterface {
  name = 'CreateTasks1763800001300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tasks (
        id text PRIMARY KEY,
        title text NOT NULL,
        description text,
        priority text NOT NULL CHECK (priority IN ('low', 'medium', 'high')),
        status text NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
        due_at timestamptz,
        completed_at timestamptz,
        contact_id text REFERENCES contacts (id),
        deal_id text,
        owner_id text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE INDEX tasks_contact_id ON tasks (contact_id, id)`);
    await q.query(`CREATE INDEX tasks_deal_id ON tasks (deal_id, id)`);
    await q.query(`CREATE INDEX tasks_owner_id ON tasks (owner_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tasks`);
  }
}
