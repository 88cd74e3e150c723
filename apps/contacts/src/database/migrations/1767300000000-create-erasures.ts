import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasures of a person (docs/privacy.md): one row per subject (its contact id, or the keyed hash of an
 * email that named none), its progress step by step so a restarted service resumes it, and once completed
 * the receipt. `target` holds the values being erased only while it runs and is cleared on completion.
 * `privacy_keys` holds the key the email hashes are made with when the deployment sets none. New tables
 * only: the previous release ignores them.
 */
export class CreateErasures1767300000000 implements MigrationInterface {
  name = 'CreateErasures1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE TABLE erasures (
        id text PRIMARY KEY,
        subject_key text NOT NULL UNIQUE,
        contact_id text,
        email_hmac text,
        reason text,
        suppress boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
        step text,
        target jsonb,
        results jsonb NOT NULL DEFAULT '{}',
        receipt jsonb,
        error text,
        origin jsonb NOT NULL,
        lease_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX erasures_unfinished ON erasures (created_at) WHERE status IN ('pending', 'running')`);
    await q.query(`CREATE TABLE privacy_keys (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), hmac_key text NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE privacy_keys`);
    await q.query(`DROP TABLE erasures`);
  }
}
