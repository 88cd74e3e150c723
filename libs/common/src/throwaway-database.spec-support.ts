import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { DEFAULT_DATABASE_URL } from './config';

/**
 * A database of its own for one spec of this library, named like the test stack's (`crm_t<run><random>`)
 * so the suite's teardown finds it if the spec dies first. Only specs use it (the library build leaves
 * it out); `@crm/test-support` cannot be used here, as it depends on this library.
 */
export function throwawayDatabase(): { url: string; drop(): Promise<void> } {
  const name = `crm_t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      url.pathname = '/postgres';
      const admin = new Client({ connectionString: url.toString() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    },
  };
}
