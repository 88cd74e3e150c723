import { DEFAULT_DATABASE_URL } from '@crm/common';
import { execFile } from 'child_process';
import { join } from 'path';
import { Client } from 'pg';
import { promisify } from 'util';
import { startContacts } from '../../apps/contacts/src/contacts.app';
import { eventually } from '../support/api-client';
import { dropNamespace, startStack, testEnv, testNamespace, TestStack } from '../support/stack';

/**
 * The Kubernetes split of database rights (docs/deployment.md, "Database roles"): a migration Job runs
 * each process's `main.js migrate` as a role that may create, which grants the application role read and
 * write; the pods connect as that role with DATABASE_MIGRATIONS=verify, serve, and cannot change the schema.
 */

const ROOT = join(__dirname, '..', '..');
const PROCESSES = ['gateway', 'contacts', 'deals', 'events', 'webhooks'] as const;
const run = promisify(execFile);

function urlAs(role: string, database: string): string {
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.username = role;
  url.password = '';
  url.pathname = `/${database}`;
  return url.toString();
}

async function asAdmin<T>(work: (pg: Client) => Promise<T>): Promise<T> {
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = '/postgres';
  const pg = new Client({ connectionString: url.toString() });
  await pg.connect();
  try {
    return await work(pg);
  } finally {
    await pg.end();
  }
}

// Each test migrates four schemas from nothing or starts a stack: a safety net for a loaded machine, not a speed.
jest.setTimeout(300_000);

describe('migrations as a separate, DDL-capable role; application pods with read and write only', () => {
  const namespace = testNamespace();
  const database = `crm_${namespace}`;
  const migrator = `${namespace}_migrator`;
  const appRole = `${namespace}_app`;
  const ungranted = `${namespace}_other`;
  const env = testEnv(namespace);
  let stack: TestStack | undefined;

  beforeAll(async () => {
    await asAdmin(async (pg) => {
      // The documented set-up: neither role is a superuser; the migrator owns the database.
      await pg.query(`CREATE ROLE ${migrator} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
      await pg.query(`CREATE ROLE ${appRole} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
      await pg.query(`CREATE ROLE ${ungranted} LOGIN`);
      await pg.query(`CREATE DATABASE "${database}" OWNER ${migrator}`);
    });
  });

  afterAll(async () => {
    await stack?.stop();
    // The database (env names it too), and the stream the early pod created for this namespace.
    await dropNamespace(env);
    await asAdmin(async (pg) => {
      await pg.query(`DROP ROLE IF EXISTS ${appRole}`);
      await pg.query(`DROP ROLE IF EXISTS ${ungranted}`);
      await pg.query(`DROP ROLE IF EXISTS ${migrator}`);
    });
  });

  it('refuses to start a verifying service while its migrations are pending, naming the fix', async () => {
    const verifying = { ...env, DATABASE_URL: urlAs(appRole, database), DATABASE_MIGRATIONS: 'verify', DATABASE_MIGRATIONS_WAIT_SECONDS: '0' };
    await expect(startContacts(verifying)).rejects.toThrow(/schema "contacts" has \d+ pending migration\(s\) .*run the migrate command first/);
  });

  it('migrates every schema with `main.js migrate`, as the Job does, while a pod started first waits for it', async () => {
    // A rollout starts pods and the Job together: this pod waits instead of failing.
    const early = startContacts({ ...env, DATABASE_URL: urlAs(appRole, database), DATABASE_MIGRATIONS: 'verify', DATABASE_MIGRATIONS_WAIT_SECONDS: '600' });
    let earlyStarted = false;
    void early.then(
      () => (earlyStarted = true),
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(earlyStarted).toBe(false);

    const jobEnv = { ...process.env, ...env, DATABASE_URL: urlAs(migrator, database), DATABASE_APP_ROLE: appRole };
    // In parallel, like the Job's containers: each schema takes its own lock, pg_trgm a shared one.
    const outputs = await Promise.all(PROCESSES.map((p) => run('node', [join(ROOT, 'dist/apps', p, 'src/main.js'), 'migrate'], { env: jobEnv })));
    outputs.forEach(({ stdout }, i) => expect(stdout).toMatch(new RegExp(`^${PROCESSES[i]}: applied \\d+ migration\\(s\\): `)));

    const again = await run('node', [join(ROOT, 'dist/apps/contacts/src/main.js'), 'migrate'], { env: jobEnv });
    expect(again.stdout.trim()).toBe('contacts: schema is current');

    const service = await early;
    await fetch(service.healthUrl).then((res) => expect(res.status).toBe(200));
    await service.close();
  });

  it('serves the API with pods connected as the application role in verify mode', async () => {
    stack = await startStack({ env: { DATABASE_URL: urlAs(appRole, database), DATABASE_MIGRATIONS: 'verify' } });
    const created = await stack.api.post('/contacts', { email: 'roles@example.com', first_name: 'Role' });
    expect(created.status).toBe(201);
    const id = (created.body as { data: { id: string } }).data.id;
    expect((await stack.api.get(`/contacts/${id}`)).status).toBe(200);
    // The change reached the event log: the outbox relay and the events service wrote as the app role.
    await eventually(async () => {
      const events = (await stack!.api.get('/events?limit=200')).body as { data: { type: string }[] };
      return events.data.some((e) => e.type === 'contact.created') || undefined;
    });
  });

  it('tells a role the migrations did not grant that it may not read the schema', async () => {
    const verifying = { ...env, DATABASE_URL: urlAs(ungranted, database), DATABASE_MIGRATIONS: 'verify', DATABASE_MIGRATIONS_WAIT_SECONDS: '0' };
    await expect(startContacts(verifying)).rejects.toThrow(/this role may not read schema "contacts"; run the migrate command with DATABASE_APP_ROLE/);
  });

  it('gives the application role no right to change the schema', async () => {
    const pg = new Client({ connectionString: urlAs(appRole, database) });
    await pg.connect();
    try {
      for (const ddl of [
        'CREATE TABLE contacts.intruder (id int)',
        'CREATE TABLE public.intruder (id int)',
        'ALTER TABLE contacts.contacts ADD COLUMN intruder int',
        'DROP TABLE deals.deals',
        'CREATE SCHEMA intruder',
      ]) {
        await expect(pg.query(ddl)).rejects.toMatchObject({ code: '42501' });
      }
      // What it does need, it has: reading and writing rows of every service's schema.
      const [{ count }] = (await pg.query('SELECT count(*)::int AS count FROM contacts.contacts')).rows;
      expect(count).toBe(1);
    } finally {
      await pg.end();
    }
  });
});
