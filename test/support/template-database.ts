import { DEFAULT_DATABASE_URL, Env } from '@crm/common';
import { migrateService } from '@crm/runtime';
import { Client } from 'pg';
import { templateDatabaseName } from './test-run';

/** The server's maintenance database, as the suite's own (administrative) user. */
export function adminDatabaseUrl(): string {
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = '/postgres';
  return url.toString();
}

/** Each process's `migrate`, in the order startStack starts them (the gateway last); the apps loaded only here. */
async function migrateAll(env: Env): Promise<void> {
  const definitions = [
    (await import('../../apps/contacts/src/contacts.app')).contactsApp,
    (await import('../../apps/deals/src/deals.app')).dealsApp,
    (await import('../../apps/events/src/events.app')).eventsApp,
    (await import('../../apps/webhooks/src/webhooks.app')).webhooksApp(env),
  ];
  for (const definition of definitions) await migrateService(definition, env);
  await (await import('../../apps/gateway/src/gateway.app')).migrateGateway(env);
}

let made: Promise<string> | undefined;

/**
 * The run's template database: every schema's migrations applied once per run, as each process applies
 * them at start before serving, and nothing else. No process ever ran on it, so it holds no API key, no
 * leader's lease, no index built at start, no rows but the migrations' own. startStack makes a suite's
 * database as a copy of it (CREATE DATABASE … TEMPLATE); the services then find their migrations applied
 * and do everything else they do at start. Made by whichever worker asks first while the others wait on an
 * advisory lock; marked IS_TEMPLATE only once complete, so one left half-made (a killed worker) is made again.
 */
export function templateDatabase(env: Env): Promise<string> {
  made ??= makeTemplate(env).catch((err) => {
    made = undefined; // the next suite tries again and reports its own failure
    throw err;
  });
  return made;
}

async function makeTemplate(env: Env): Promise<string> {
  const name = templateDatabaseName();
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_advisory_lock(hashtext($1))`, [`crm:test-template:${name}`]);
    const { rows } = await admin.query<{ datistemplate: boolean }>(`SELECT datistemplate FROM pg_database WHERE datname = $1`, [name]);
    if (rows[0]?.datistemplate) return name;
    if (rows.length) await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
    const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
    url.pathname = `/${name}`;
    await migrateAll({ ...env, DATABASE_URL: url.toString() });
    // No session may be connected to a template while it is copied: none can connect from now on.
    await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    return name;
  } finally {
    await admin.end(); // ends the session, and with it the advisory lock
  }
}

/**
 * A suite's own database, `DATABASE_URL`'s, made as a copy of the run's template. Its sessions commit
 * without waiting for the WAL to reach the disk (synchronous_commit off, set on this database only): what
 * they see is the same, only a crash of the shared server could lose the last commits of a throwaway
 * database, as the private servers of the fault tests (fsync off) could too.
 */
export async function createFromTemplate(env: Env): Promise<void> {
  const template = await templateDatabase(env);
  const name = new URL(env.DATABASE_URL!).pathname.slice(1);
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    await admin.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  } finally {
    await admin.end();
  }
}
