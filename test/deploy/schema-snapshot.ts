import { DatabaseSpec } from '@crm/common';
import { join } from 'path';
import { DataSource } from 'typeorm';
import { contactsApp } from '../../apps/contacts/src/contacts.app';
import { dealsApp } from '../../apps/deals/src/deals.app';
import { eventsApp } from '../../apps/events/src/events.app';
import { gatewayDatabase } from '../../apps/gateway/src/gateway.app';
import { webhooksApp } from '../../apps/webhooks/src/webhooks.app';
import { testEnv } from '../support/stack';

/**
 * Each service's schema as its migrations leave it, in a stable text form: what
 * `apps/<app>/src/database/schema.snapshot.txt` holds and `schema-drift.spec.ts` compares with.
 */
export const SERVICES: Record<string, Pick<DatabaseSpec, 'entities' | 'migrations'>> = {
  contacts: contactsApp.database,
  deals: dealsApp.database,
  events: eventsApp.database,
  // Any valid key: the encryption migration finds nothing to encrypt in an empty schema.
  webhooks: webhooksApp(testEnv()).database,
  gateway: gatewayDatabase({ databaseUrl: '', databaseMigrations: 'run', databaseMigrationsWaitSeconds: 0 }),
};

export async function snapshot(ds: DataSource, schema: string): Promise<string> {
  const lines: string[] = [];
  const columns = await ds.query(
    `SELECT table_name, column_name, format_type(a.atttypid, a.atttypmod) AS type, is_nullable, column_default
       FROM information_schema.columns c
       JOIN pg_attribute a ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass AND a.attname = c.column_name
      WHERE table_schema = $1 AND table_name <> 'migrations'`,
    [schema],
  );
  for (const c of columns) {
    lines.push(
      `column ${c.table_name}.${c.column_name} ${c.type}${c.is_nullable === 'NO' ? ' not null' : ''}${c.column_default ? ` default ${c.column_default}` : ''}`,
    );
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

/** Where a service's committed snapshot lives. */
export function snapshotFile(service: string): string {
  return join(__dirname, '..', '..', 'apps', service, 'src', 'database', 'schema.snapshot.txt');
}
