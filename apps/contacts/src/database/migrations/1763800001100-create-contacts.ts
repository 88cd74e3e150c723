import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateContacts1763800001100 implements MigrationInterface {
  name = 'CreateContacts1763800001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contacts (
        id text PRIMARY KEY,
        email text NOT NULL,
        first_name text,
        last_name text,
        phone text,
        title text,
        stage text CHECK (stage IN ('lead', 'prospect', 'customer', 'churned')),
        source text CHECK (source IN ('organic', 'referral', 'paid', 'social', 'email', 'event', 'outbound', 'other')),
        source_detail text,
        company_id text REFERENCES companies (id) ON DELETE SET NULL,
        owner_id text,
        icp_score integer CHECK (icp_score BETWEEN 0 AND 100),
        icp_score_reason text,
        icp_scored_at timestamptz,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    // Email is unique per organisation regardless of case; the index, not a lookup, settles racing creates.
    await q.query(`CREATE UNIQUE INDEX contacts_email_key ON contacts (lower(email))`);
    // The expression is ContactsService's CONTACT_SEARCH_TEXT, written out: a migration never changes with the code.
    await q.query(
      `CREATE INDEX contacts_search_trgm ON contacts USING gin ((coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\\n' || email) public.gin_trgm_ops)`,
    );
    // Filters page by id, so each filter column is indexed together with it.
    await q.query(`CREATE INDEX contacts_company_id ON contacts (company_id, id)`);
    await q.query(`CREATE INDEX contacts_owner_id ON contacts (owner_id, id)`);
    await q.query(`CREATE INDEX contacts_stage ON contacts (stage, id)`);
    await q.query(`CREATE INDEX contacts_source ON contacts (source, id)`);
    await q.query(`CREATE INDEX contacts_icp_score ON contacts (icp_score)`);
    await q.query(`CREATE INDEX contacts_icp_scored_at ON contacts (icp_scored_at)`);
    await q.query(`CREATE INDEX contacts_created_at ON contacts (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE contacts`);
  }
}
