import { openDatabase } from '@crm/common';
import { dropNamespace, testEnv } from '@crm/test-support';
import { contactsEntities, contactsMigrations } from '../src/database';
import { CONTACT_SEARCH_TEXT } from '../src/contacts/contacts.service';

describe('contact search index', () => {
  const env = testEnv();
  afterAll(() => dropNamespace(env));

  it('is built on exactly the expression the search query uses, so PostgreSQL can use it', async () => {
    const ds = await openDatabase({ url: env.DATABASE_URL!, schema: 'contacts', entities: contactsEntities, migrations: contactsMigrations });
    try {
      // PostgreSQL prints expressions in its own normal form: build a probe index to compare in that form.
      await ds.query(`CREATE TEMP TABLE search_probe (first_name text, last_name text, email text)`);
      await ds.query(`CREATE INDEX search_probe_idx ON search_probe USING gin (${CONTACT_SEARCH_TEXT} public.gin_trgm_ops)`);
      const [probe] = await ds.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'search_probe_idx'`);
      const [real] = await ds.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'contacts' AND indexname = 'contacts_search_trgm'`);
      const expression = (def: string) => def.slice(def.indexOf('USING gin'));
      expect(expression(real.indexdef)).toBe(expression(probe.indexdef));
    } finally {
      await ds.destroy();
    }
  });
});
