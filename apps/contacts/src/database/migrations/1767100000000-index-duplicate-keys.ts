import { MigrationInterface, QueryRunner } from 'typeorm';

/** The indexes this migration builds, by table and expression (docs/search.md, "Duplicates"). */
export const DUPLICATE_INDEXES: ReadonlyArray<{ name: string; definition: string }> = [
  { name: 'contacts_duplicate_email_key', definition: `contacts (duplicate_email_key(email))` },
  { name: 'contacts_duplicate_email_domain', definition: `contacts (duplicate_email_domain(email))` },
  { name: 'contacts_duplicate_last_name', definition: `contacts (search_fold(btrim(last_name))) WHERE last_name IS NOT NULL` },
  { name: 'companies_duplicate_name', definition: `companies USING gin (duplicate_company_name(name) public.gin_trgm_ops)` },
];

/**
 * The keys the duplicate rules look candidates up by: an email key that also folds Gmail's dots, the
 * email's domain (a company's contacts without a company record), a contact's folded surname (how many
 * share it) and a company's name without its legal form. New functions and new indexes only: the
 * previous release reads none of them and keeps working. The indexes are built CONCURRENTLY, so writers
 * never wait on a build, hence outside a transaction; an expression index needs no backfill.
 */
export class IndexDuplicateKeys1767100000000 implements MigrationInterface {
  name = 'IndexDuplicateKeys1767100000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // A build that cannot get its lock within 5 s fails (the service retries on its next start) rather than
    // queueing writers behind it.
    await q.query(`SET lock_timeout = '5s'`);
    try {
      // Lower case, no +tag; for Gmail (which ignores dots and answers at googlemail.com too) no dots and gmail.com.
      await q.query(`
        CREATE OR REPLACE FUNCTION duplicate_email_key(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT CASE WHEN split_part(k, '@', 2) IN ('gmail.com', 'googlemail.com') THEN replace(split_part(k, '@', 1), '.', '') || '@gmail.com' ELSE k END
              FROM (SELECT lower(regexp_replace(btrim($1), '\\+[^@]*@', '@')) AS k) s $$`);
      await q.query(`
        CREATE OR REPLACE FUNCTION duplicate_email_domain(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT nullif(split_part(duplicate_email_key($1), '@', 2), '') $$`);
      // Folded, punctuation to blanks, dots dropped (G.m.b.H.), and the legal forms at the end taken off.
      await q.query(`
        CREATE OR REPLACE FUNCTION duplicate_company_name(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT btrim(regexp_replace(
                btrim(regexp_replace(search_fold(replace($1, '.', '')), '[^[:alnum:]]+', ' ', 'g')),
                '( (inc|incorporated|ltd|limited|llc|llp|gmbh|ag|kg|corp|corporation|co|company|plc|sa|sas|sarl|srl|spa|bv|nv|oy|ab|as|pty|kk))+$', '')) $$`);
      for (const index of DUPLICATE_INDEXES) {
        // An interrupted CONCURRENTLY build leaves an invalid index behind, which IF NOT EXISTS would keep.
        const invalid: unknown[] = await q.query(
          `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
          [index.name],
        );
        if (invalid.length) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
        await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name} ON ${index.definition}`);
      }
    } finally {
      // The connection goes back to the pool.
      await q.query(`RESET lock_timeout`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '5s'`);
    try {
      for (const index of [...DUPLICATE_INDEXES].reverse()) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
      for (const fn of ['duplicate_company_name(text)', 'duplicate_email_domain(text)', 'duplicate_email_key(text)'])
        await q.query(`DROP FUNCTION IF EXISTS ${fn}`);
    } finally {
      await q.query(`RESET lock_timeout`);
    }
  }
}
