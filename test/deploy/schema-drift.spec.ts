import { openDatabase } from '@crm/common';
import { existsSync, readFileSync } from 'fs';
import { DataSource } from 'typeorm';
import { dropNamespace, testEnv } from '../support/stack';
import { SERVICES, snapshot, snapshotFile } from './schema-snapshot';

/**
 * Entities and migrations describe one schema. Each service's migrations run on an empty database, then:
 * - TypeORM compares the entities with the result; any table or column it would add, drop or retype is
 *   drift (indexes, checks, foreign keys and defaults live in the migrations only, so those differences
 *   are expected and left to the snapshot);
 * - the migrated schema is compared with the snapshot committed beside the migrations, so a schema change
 *   is always a reviewed diff. After changing a migration, `npm run schema:snapshots` rewrites the
 *   snapshots; this file only ever compares.
 */
/** Differences from what only migrations declare; anything else the schema builder wants is drift. */
const MIGRATION_ONLY = [/^DROP INDEX /, /^ALTER TABLE \S+ DROP CONSTRAINT /, /^ALTER TABLE \S+ ALTER COLUMN \S+ (SET|DROP) DEFAULT/];

describe('database schema', () => {
  const env = testEnv();
  afterAll(() => dropNamespace(env));

  for (const [service, { entities, migrations }] of Object.entries(SERVICES)) {
    describe(service, () => {
      let ds: DataSource;
      beforeAll(async () => {
        ds = await openDatabase({ url: env.DATABASE_URL!, schema: service, entities, migrations });
      });
      afterAll(() => ds?.destroy());

      it('has the tables and columns its entities expect, as the migrations create them', async () => {
        const { upQueries } = await ds.driver.createSchemaBuilder().log();
        const drift = upQueries.map((q) => q.query).filter((query) => !MIGRATION_ONLY.some((allowed) => allowed.test(query)));
        expect(drift).toEqual([]);
      });

      // PostgreSQL inlines SQL functions under expression indexes while planning any query on a table, and
      // resolves the names in their bodies with the session's search_path; psql, pg_dump and autovacuum do not
      // have the service's schema on it, so a body that names a sibling function bare breaks every query.
      it('answers a query on each of its tables from a session whose search_path lacks the schema', async () => {
        const tables: Array<{ name: string }> = await ds.query(
          `SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`,
          [service],
        );
        expect(tables.length).toBeGreaterThan(0);
        const runner = ds.createQueryRunner();
        try {
          await runner.query(`SET search_path = public`);
          const failed: string[] = [];
          for (const { name } of tables) {
            await runner.query(`SELECT 1 FROM ${service}.${name} LIMIT 1`).catch((err: Error) => failed.push(`${name}: ${err.message}`));
          }
          expect(failed).toEqual([]);
        } finally {
          await runner.query(`RESET search_path`);
          await runner.release();
        }
      });

      it('matches its committed schema snapshot', async () => {
        const file = snapshotFile(service);
        const actual = await snapshot(ds, service);
        const committed = existsSync(file) ? readFileSync(file, 'utf8') : '(no snapshot yet)';
        // On a difference: check the migration is intended, then rewrite the snapshots (see above).
        expect(actual).toBe(committed);
      });
    });
  }
});
