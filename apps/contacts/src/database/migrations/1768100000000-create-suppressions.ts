import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Suppressions (docs/privacy.md, "Suppression"): the keyed hash of an email erased with `suppress`, so the
 * email is not stored again until the suppression is lifted; and an import's skipped rows, with the
 * warning that says why. A new table and two columns with constant defaults (no rewrite): the previous
 * release ignores them.
 */
export class CreateSuppressions1768100000000 implements MigrationInterface {
  name = 'CreateSuppressions1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`CREATE TABLE suppressions (email_hmac text PRIMARY KEY, erasure_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`ALTER TABLE imports ADD COLUMN skipped integer NOT NULL DEFAULT 0, ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE imports DROP COLUMN warnings, DROP COLUMN skipped`);
    await q.query(`DROP TABLE suppressions`);
  }
}
