import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `duplicate_email_domain` and `duplicate_company_name` (IndexDuplicateKeys1767100000000) call
 * `duplicate_email_key` and `search_fold` by bare name. Both are SQL functions under expression indexes,
 * and PostgreSQL inlines such a body while it plans any query on the table, resolving its names with the
 * planning session's search_path: a session whose path does not hold this schema (psql, pg_dump, an
 * operator's `SELECT … FROM contacts.contacts`, autovacuum's ANALYZE) failed with "function
 * duplicate_email_key(text) does not exist". The bodies now name this schema. Same signatures and the same
 * result for every input, so the indexes over them stay valid without a rebuild, and no table is locked.
 */
export class QualifyDuplicateFunctions1767400000000 implements MigrationInterface {
  name = 'QualifyDuplicateFunctions1767400000000';

  async up(q: QueryRunner): Promise<void> {
    // Migrations run in a transaction each, so this ends with it.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    const [{ schema }]: Array<{ schema: string }> = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
    await q.query(`
      CREATE OR REPLACE FUNCTION duplicate_email_domain(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT nullif(split_part(${schema}.duplicate_email_key($1), '@', 2), '') $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION duplicate_company_name(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT btrim(regexp_replace(
              btrim(regexp_replace(${schema}.search_fold(replace($1, '.', '')), '[^[:alnum:]]+', ' ', 'g')),
              '( (inc|incorporated|ltd|limited|llc|llp|gmbh|ag|kg|corp|corporation|co|company|plc|sa|sas|sarl|srl|spa|bv|nv|oy|ab|as|pty|kk))+$', '')) $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE OR REPLACE FUNCTION duplicate_email_domain(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT nullif(split_part(duplicate_email_key($1), '@', 2), '') $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION duplicate_company_name(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT btrim(regexp_replace(
              btrim(regexp_replace(search_fold(replace($1, '.', '')), '[^[:alnum:]]+', ' ', 'g')),
              '( (inc|incorporated|ltd|limited|llc|llp|gmbh|ag|kg|corp|corporation|co|company|plc|sa|sas|sarl|srl|spa|bv|nv|oy|ab|as|pty|kk))+$', '')) $$`);
  }
}
