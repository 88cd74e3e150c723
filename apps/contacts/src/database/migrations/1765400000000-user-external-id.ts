import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A team member's id at the deployment's identity provider: a bearer token whose `sub` equals it acts as
 * that member (docs/users.md). Unique where set; the gateway looks members up by it.
 */
export class UserExternalId1765400000000 implements MigrationInterface {
  name = 'UserExternalId1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN external_id text`);
    await q.query(`CREATE UNIQUE INDEX users_external_id_key ON users (external_id) WHERE external_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX users_external_id_key`);
    await q.query(`ALTER TABLE users DROP COLUMN external_id`);
  }
}
