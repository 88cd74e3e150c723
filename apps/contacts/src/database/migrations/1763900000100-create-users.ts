import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateUsers1763900000100 implements MigrationInterface {
  name = 'CreateUsers1763900000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id text PRIMARY KEY,
        name text NOT NULL,
        email text NOT NULL,
        role text NOT NULL DEFAULT 'member',
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE users`);
  }
}
