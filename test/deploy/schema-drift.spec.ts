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
