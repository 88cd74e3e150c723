import { MigrationInterface, QueryRunner } from 'typeorm';

/** The dictionary's trigram index: typo look-ups read the words sharing trigrams with a query word instead of every word. */
export const SEARCH_WORDS_TRIGRAMS = 'search_words_trgm';

/**
 * A trigram index on `search_words.word` (docs/search.md, "How hits are found"). Built CONCURRENTLY so that
 * writers, whose triggers add words to the dictionary, never wait on the build; so it runs outside a
 * transaction. The previous release never reads the index and keeps its own look-up, which still works.
 */
export class IndexSearchWordsTrigrams1765800000000 implements MigrationInterface {
  name = 'IndexSearchWordsTrigrams1765800000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    // A build that cannot get its lock within 5 s fails (and the service retries on its next start) rather
    // than queueing writers behind it.
    await q.query(`SET lock_timeout = '5s'`);
    try {
      // An interrupted CONCURRENTLY build leaves an invalid index behind, which IF NOT EXISTS would keep.
      const invalid: unknown[] = await q.query(
        `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid`,
        [SEARCH_WORDS_TRIGRAMS],
      );
      if (invalid.length) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${SEARCH_WORDS_TRIGRAMS}`);
      await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${SEARCH_WORDS_TRIGRAMS} ON search_words USING gin (word public.gin_trgm_ops)`);
    } finally {
      // The connection goes back to the pool.
      await q.query(`RESET lock_timeout`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '5s'`);
    try {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${SEARCH_WORDS_TRIGRAMS}`);
    } finally {
      await q.query(`RESET lock_timeout`);
    }
  }
}
