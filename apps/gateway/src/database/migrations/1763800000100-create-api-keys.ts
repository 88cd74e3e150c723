import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateApiKeys1763800000100 implements MigrationInterface {
  name = 'CreateApiKeys1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        name text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('read', 'read-write', 'capture-only')),
        key_hash text NOT NULL UNIQUE,
        last4 text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys`);
  }
}
