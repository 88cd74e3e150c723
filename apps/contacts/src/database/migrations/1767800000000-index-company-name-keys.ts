import { MigrationInterface, QueryRunner } from 'typeorm';

/** The index the company duplicate look-up reads names by (docs/search.md, "Duplicates"). */
export const COMPANY_NAME_KEYS_INDEX = 'companies_duplicate_name_keys';

/**
 * A company's name keys: its name without legal form and blanks (`=acmerobotics`), and the first word of
 * that name with every way of deleting one letter from it (three letters or more) or two (five or more).
 * Two words within the typos the duplicate rule allows (one edit up to four letters, two from five,
 * Damerau-Levenshtein) always share one of these deletions, so the look-up is an index read of the
 * companies sharing a key instead of a trigram comparison with every name that shares the kind of
 * business (`… Labs`). The first word is cut at 20 letters (at most 212 keys a name).
 *
 * New function and new index only: the previous release reads `companies_duplicate_name` (the trigram
 * index of IndexDuplicateKeys1767100000000), which stays until no release reads it. An expression index
 * needs no backfill; it is built CONCURRENTLY, outside a transaction, so writers never wait on the build.
 */
export class IndexCompanyNameKeys1767800000000 implements MigrationInterface {
  name = 'IndexCompanyNameKeys1767800000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // A build that cannot get its lock within 5 s fails (the service retries on its next start) rather than
    // queueing writers behind it.
    await q.query(`SET lock_timeout = '5s'`);
    try {
      // The body names its schema: an index expression is evaluated by sessions of any search_path (ANALYZE, pg_dump).
      const [{ schema }]: Array<{ schema: string }> = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
      await q.query(`
        CREATE OR REPLACE FUNCTION duplicate_company_keys(text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
        AS $$
        DECLARE
          n text := ${schema}.duplicate_company_name($1);
          w text := left(split_part(n, ' ', 1), 20);
          l int := length(w);
          keys text[];
          d text;
        BEGIN
          IF n = '' THEN RETURN NULL; END IF;
          keys := ARRAY['=' || replace(n, ' ', ''), w];
          IF l >= 3 THEN
            FOR i IN 1..l LOOP
              d := left(w, i - 1) || substr(w, i + 1);
              keys := keys || d;
              IF l >= 5 THEN
                FOR j IN i..l - 1 LOOP
                  keys := keys || (left(d, j - 1) || substr(d, j + 1));
                END LOOP;
              END IF;
            END LOOP;
          END IF;
          RETURN keys;
        END $$`);
      // An interrupted CONCURRENTLY build leaves an invalid index behind, which IF NOT EXISTS would keep.
      const invalid: unknown[] = await q.query(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
        [COMPANY_NAME_KEYS_INDEX],
      );
      if (invalid.length) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${COMPANY_NAME_KEYS_INDEX}`);
      await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${COMPANY_NAME_KEYS_INDEX} ON companies USING gin (duplicate_company_keys(name))`);
    } finally {
      // The connection goes back to the pool.
      await q.query(`RESET lock_timeout`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '5s'`);
    try {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${COMPANY_NAME_KEYS_INDEX}`);
      await q.query(`DROP FUNCTION IF EXISTS duplicate_company_keys(text)`);
    } finally {
      await q.query(`RESET lock_timeout`);
    }
  }
}
