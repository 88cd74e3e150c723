import { startContacts } from '../../apps/contacts/src/contacts.app';
import { dropNamespace, testEnv } from '../support/stack';

/**
 * The dictionary's trigram index is built CONCURRENTLY (libs/records/src/search/search-words-trigrams.migration.ts):
 * a build that fails half-way leaves an invalid index, which the next start must build again rather than keep.
 */
describe('search_words_trgm migration', () => {
  const env = testEnv();
  afterAll(() => dropNamespace(env));

  const validity = async (service: Awaited<ReturnType<typeof startContacts>>) =>
    (
      await service.dataSource.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'search_words_trgm' AND c.relnamespace = 'contacts'::regnamespace`,
      )
    ).map((r: { valid: boolean }) => r.valid);

  it('builds the index again when an earlier build left it invalid', async () => {
    let service = await startContacts(env);
    try {
      expect(await validity(service)).toEqual([true]);
      // What an interrupted CREATE INDEX CONCURRENTLY leaves: the index, marked invalid, and the migration not recorded.
      await service.dataSource.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'contacts.search_words_trgm'::regclass`);
      await service.dataSource.query(`DELETE FROM contacts.migrations WHERE name = 'IndexSearchWordsTrigrams1765800000000'`);
      expect(await validity(service)).toEqual([false]);
    } finally {
      await service.close();
    }
    service = await startContacts(env);
    try {
      expect(await validity(service)).toEqual([true]);
    } finally {
      await service.close();
    }
  });
});
