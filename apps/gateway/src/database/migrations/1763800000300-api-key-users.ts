import { MigrationInterface, QueryRunner } from 'typeorm';

/** A key may belong to a team member (a `user_` id kept by the contacts service). */
export class ApiKeyUsers1763800000300 implements MigrationInterface {
  name = 'ApiKeyUsers1763800000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN user_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN user_id`);
  }
}
