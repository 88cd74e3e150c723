import { createWordIndex, dropWordIndex } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { SEARCH_WORDS } from '../../search/search-targets';

/**
 * GET /search finds words through one word index per table (docs/search.md) instead of trigram indexes on
 * each field, whose candidates cost seconds to rank at a million contacts. The trigram indexes on contact
 * and company names stay: the duplicate routes' similar-name rule reads them.
 */
export class IndexSearchWords1765400000100 implements MigrationInterface {
  name = 'IndexSearchWords1765400000100';

  async up(q: QueryRunner): Promise<void> {
    for (const index of [
      'contacts_search_email',
      'contacts_search_title',
      'companies_search_domain',
      'users_search_name',
      'users_search_email',
      'activities_search_subject',
      'tasks_search_title',
      'object_records_search',
    ]) {
      await q.query(`DROP INDEX ${index}`);
    }
    for (const [table, text] of Object.entries(SEARCH_WORDS)) await createWordIndex(q, table, text(''));
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of Object.keys(SEARCH_WORDS)) await dropWordIndex(q, table);
    const trigram = (name: string, table: string, expression: string) =>
      q.query(`CREATE INDEX ${name} ON ${table} USING gin (search_fold(${expression}) public.gin_trgm_ops)`);
    await trigram('contacts_search_email', 'contacts', 'email');
    await trigram('contacts_search_title', 'contacts', 'title');
    await trigram('companies_search_domain', 'companies', 'domain');
    await trigram('users_search_name', 'users', 'name');
    await trigram('users_search_email', 'users', 'email');
    await trigram('activities_search_subject', 'activities', 'subject');
    await trigram('tasks_search_title', 'tasks', 'title');
    await trigram('object_records_search', 'object_records', `"values"::text`);
  }
}
