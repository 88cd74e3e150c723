import { MigrationInterface, QueryRunner } from 'typeorm';

/** A key made with `scopes` keeps its own permissions; a key with a named scope keeps none here (its scope is its set). */
export class ApiKeyScopes1765000000000 implements MigrationInterface {
  name = 'ApiKeyScopes1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN scopes text[]`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check`);
    // A custom key has its permissions, a named scope none: its set is the scope's.
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (
      (scope IN ('read', 'read-write', 'capture-only') AND scopes IS NULL) OR (scope = 'custom' AND cardinality(scopes) > 0))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM api_keys WHERE scope = 'custom'`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN scopes`);
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'read-write', 'capture-only'))`);
  }
}
