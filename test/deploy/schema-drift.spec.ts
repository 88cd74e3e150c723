import { DatabaseSpec, openDatabase } from '@crm/common';
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';
import { DataSource } from 'typeorm';
import { contactsApp } from '../../apps/contacts/src/contacts.app';
import { dealsApp } from '../../apps/deals/src/deals.app';
import { eventsApp } from '../../apps/events/src/events.app';
import { gatewayDatabase } from '../../apps/gateway/src/gateway.app';
import { webhooksApp } from '../../apps/webhooks/src/webhooks.app';
import { dropNamespace, testEnv } from '../support/stack';

/**
 * Entities and migrations describe one schema. Each service's migrations run on an empty database, then:
 * - TypeORM compares the entities with the result; any table or column it would add, drop or retype is
 *   drift (indexes, checks, foreign keys and defaults live in the migrations only, so those differences
 *   are expected and left to the snapshot);
 * - the migrated schema is compared with the snapshot committed beside the migrations, so a schema change
 *   is always a reviewed diff. After changing a migration, `UPDATE_SCHEMA_SNAPSHOTS=1 npx jest
 *   test/deploy/schema-drift.spec.ts` rewrites the snapshots.
 */
const SERVICES: Record<string, Pick<DatabaseSpec, 'entities' | 'migrations'>> = {
  contacts: contactsApp.database,
  deals: dealsApp.database,
  events: eventsApp.database,
  // Any valid key: the encryption migration finds nothing to encrypt in an empty schema.
  webhooks: webhooksApp(testEnv()).database,
  gateway: gatewayDatabase({ databaseUrl: '', databaseMigrations: 'run', databaseMigrationsWaitSeconds: 0 }),
};

/** Differences from what only migrations declare; anything else the schema builder wants is drift. */
const MIGRATION_ONLY = [/^DROP INDEX /, /^ALTER TABLE \S+ DROP CONSTRAINT /, /^ALTER TABLE \S+ ALTER COLUMN \S+ (SET|DROP) DEFAULT/];

async function snapshot(ds: DataSource, schema: string): Promise<string> {
  const lines: string[] = [];
  const columns = await ds.query(
    `SELECT table_name, column_name, format_type(a.atttypid, a.atttypmod) AS type, is_nullable, column_default
       FROM information_schema.columns c
       JOIN pg_attribute a ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass AND a.attname = c.column_name
      WHERE table_schema = $1 AND table_name <> 'migrations'`,
    [schema],
  );
  for (const c of columns) {
    lines.push(`column ${c.table_name}.${c.column_name} ${c.type}${c.is_nullable === 'NO' ? ' not null' : ''}${c.column_default ? ` default ${c.column_default}` : ''}`);
  }
  const indexes = await ds.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename <> 'migrations'`, [schema]);
  for (const i of indexes) lines.push(`index ${i.indexdef}`);
  const constraints = await ds.query(
    `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS def
       FROM pg_constraint WHERE connamespace = $1::regnamespace AND conrelid::regclass::text NOT LIKE '%migrations'`,
    [schema],
  );
  for (const c of constraints) lines.push(`constraint ${c.table_name}.${c.conname} ${c.def}`);
  // Functions by signature and a hash of their body: a function changed outside a migration is drift too.
  const functions = await ds.query(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') returns ' || pg_get_function_result(p.oid) || ' body ' || md5(p.prosrc) AS def
       FROM pg_proc p WHERE p.pronamespace = $1::regnamespace`,
    [schema],
  );
  for (const f of functions) lines.push(`function ${f.def}`);
  return `${lines.sort().join('\n')}\n`;
}

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
        const file = join(__dirname, '..', '..', 'apps', service, 'src', 'database', 'schema.snapshot.txt');
        const actual = await snapshot(ds, service);
        if (process.env.UPDATE_SCHEMA_SNAPSHOTS) writeFileSync(file, actual);
        const committed = existsSync(file) ? readFileSync(file, 'utf8') : '(no snapshot yet)';
        // On a difference: check the migration is intended, then rewrite the snapshots (see above).
        expect(actual).toBe(committed);
      });
    });
  }
});
