import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes GET /search and the duplicate routes read (docs/search.md): trigram indexes over the folded
 * (lower-case, accent-free) text of every searchable field, which serve word starts, typos and exact
 * matches alike, and B-tree indexes over the keys that compare phones, emails and domains. They are
 * ordinary indexes, updated in the writing transaction, so a search sees every acknowledged write.
 */
export class IndexSearch1765200000200 implements MigrationInterface {
  name = 'IndexSearch1765200000200';

  async up(q: QueryRunner): Promise<void> {
    const trigram = (name: string, table: string, expression: string) =>
      q.query(`CREATE INDEX ${name} ON ${table} USING gin (search_fold(${expression}) public.gin_trgm_ops)`);
    await trigram('contacts_search_name', 'contacts', `btrim(coalesce(first_name, '') || ' ' || coalesce(last_name, ''))`);
    await trigram('contacts_search_email', 'contacts', 'email');
    await trigram('contacts_search_title', 'contacts', 'title');
    await q.query(`CREATE INDEX contacts_search_phone ON contacts (search_phone_key(phone)) WHERE phone IS NOT NULL`);
    await q.query(`CREATE INDEX contacts_search_email_key ON contacts (search_email_key(email))`);
    await trigram('companies_search_name', 'companies', 'name');
    await trigram('companies_search_domain', 'companies', 'domain');
    await q.query(`CREATE INDEX companies_search_domain_key ON companies (search_domain_key(domain)) WHERE domain IS NOT NULL`);
    await trigram('users_search_name', 'users', 'name');
    await trigram('users_search_email', 'users', 'email');
    await trigram('activities_search_subject', 'activities', 'subject');
    await trigram('tasks_search_title', 'tasks', 'title');
    await trigram('object_records_search', 'object_records', `"values"::text`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of [
      'object_records_search',
      'tasks_search_title',
      'activities_search_subject',
      'users_search_email',
      'users_search_name',
      'companies_search_domain_key',
      'companies_search_domain',
      'companies_search_name',
      'contacts_search_email_key',
      'contacts_search_phone',
      'contacts_search_title',
      'contacts_search_email',
      'contacts_search_name',
    ]) {
      await q.query(`DROP INDEX ${index}`);
    }
  }
}
