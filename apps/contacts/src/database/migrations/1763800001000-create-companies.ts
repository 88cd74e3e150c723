import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateCompanies1763800001000 implements MigrationInterface {
  name = 'CreateCompanies1763800001000';

  async up(q: QueryRunner): Promise<void> {
    // Several services may create the extension in one database; the lock stops two of them racing on it.
    await q.query(`SELECT pg_advisory_xact_lock(hashtext('crm:extension:pg_trgm'))`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`);
    await q.query(`
      CREATE TABLE companies (
        id text PRIMARY KEY,
        name text NOT NULL,
        domain text,
        industry text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    // One company per domain, so imports and enrichment can match on it.
    await q.query(`CREATE UNIQUE INDEX companies_domain_key ON companies (lower(domain)) WHERE domain IS NOT NULL`);
    await q.query(`CREATE INDEX companies_name_trgm ON companies USING gin (name public.gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The extension stays: other schemas in the database may use it.
    await q.query(`DROP TABLE companies`);
  }
}
