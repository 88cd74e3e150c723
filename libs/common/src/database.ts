import { Client, ClientConfig } from 'pg';
import { DataSource, DataSourceOptions, EntityManager, MigrationExecutor, MixedList } from 'typeorm';
import { isLockTimeout, MIGRATION_LOCK_RETRIES, MIGRATION_LOCK_TIMEOUT_MS, pause } from './migration-safety';
import { StartupError } from './startup';

type ClassList = MixedList<Function>;

const VERIFY_POLL_MS = 1000;
const INSUFFICIENT_PRIVILEGE = '42501';

export interface DatabaseSpec {
  url: string;
  /** The PostgreSQL schema this service owns; no other service reads it. */
  schema: string;
  entities: ClassList;
  migrations: ClassList;
  poolSize?: number;
  /** `run` (the default) applies pending migrations at start; `verify` only refuses to start while any are pending. */
  migrationsMode?: 'run' | 'verify';
  /** In `verify` mode, how long to wait for pending migrations to be applied by someone else. */
  verifyWaitMs?: number;
  /** Granted read and write on the schema's tables after migrating, for application pods without DDL rights. */
  appRole?: string;
}

function describe(url: string): string {
  const u = new URL(url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}`;
}

/** Creates the database named in the URL when it does not exist yet (first start on a fresh machine). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, '')) || 'postgres';
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new StartupError(`${describe(url)} is unreachable: ${(err as Error).message}`);
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        // Another process created it at the same moment: 42P04, or 23505 from the catalog's unique index.
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

/**
 * How soon a dead peer is noticed on a connection that holds a lock: the leader's session advisory lock of
 * the webhooks intake, the transaction locks of the outbox relay, the event log writer and migrations. A
 * process on a node that dies (power, network) sends no FIN, and PostgreSQL keeps its session, and every
 * lock it holds, until TCP gives up: about two hours with the kernel's keepalive defaults. With these the
 * server probes a connection idle for 20 s every 10 s and drops it after 3 unanswered probes, and gives up
 * on data unacknowledged for 50 s (tcp_user_timeout), so the lock is free in about a minute. The client's
 * keepalive notices a dead server the same way. They apply to TCP connections (not a Unix socket).
 */
export const DEAD_PEER_SETTINGS = { tcp_keepalives_idle: 20, tcp_keepalives_interval: 10, tcp_keepalives_count: 3, tcp_user_timeout: 50_000 } as const;

const deadPeerOptions = Object.entries(DEAD_PEER_SETTINGS)
  .map(([name, value]) => `-c ${name}=${value}`)
  .join(' ');

/** The settings of a connection that notices a dead peer in about a minute (DEAD_PEER_SETTINGS); `options` adds startup settings. */
function deadPeerConfig(options = ''): Pick<ClientConfig, 'keepAlive' | 'keepAliveInitialDelayMillis' | 'options'> {
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: DEAD_PEER_SETTINGS.tcp_keepalives_idle * 1000,
    options: `${deadPeerOptions}${options ? ` ${options}` : ''}`,
  };
}

/** A dedicated connection (a lock holder, a LISTEN) that notices a dead peer in about a minute. */
export function sessionConnection(connectionString: string): ClientConfig {
  return { connectionString, ...deadPeerConfig() };
}

export function dataSourceOptions(spec: DatabaseSpec): DataSourceOptions {
  return {
    type: 'postgres',
    url: spec.url,
    schema: spec.schema,
    entities: spec.entities,
    migrations: spec.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    extra: {
      // Unqualified names in migrations and raw queries resolve to the service's own schema; a dead peer
      // is noticed in about a minute, so a transaction lock held by a process on a dead node is freed.
      ...deadPeerConfig(`-c search_path=${spec.schema},public`),
      max: spec.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
    },
  };
}

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so replicas starting together apply each
 * migration once and the others wait for it. They run on a connection of their own that starts with
 * `lock_timeout` set (MIGRATION_LOCK_TIMEOUT_MS), so every migration, the released ones too, gives up a lock
 * it cannot have in time instead of queueing the table's readers and writers behind it; a migration set
 * back with RESET lock_timeout returns to this value. A run that lost a lock wait is started again, from
 * the migration that failed (each runs in its own transaction, or is written to be repeated), up to
 * MIGRATION_LOCK_RETRIES times.
 */
export async function migrate(dataSource: DataSource, schema: string): Promise<void> {
  const options = dataSource.options as DataSourceOptions & { extra?: { options?: string } };
  const migrations = new DataSource({
    ...options,
    extra: { ...options.extra, max: 1, options: `${options.extra?.options ?? ''} -c lock_timeout=${MIGRATION_LOCK_TIMEOUT_MS}`.trim() },
  } as DataSourceOptions);
  await migrations.initialize();
  const runner = migrations.createQueryRunner();
  try {
    await runner.connect();
    await runner.query(`SELECT pg_advisory_lock(hashtext($1))`, [`crm:migrate:${schema}`]);
    try {
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      for (let attempt = 0; ; attempt++) {
        const executor = new MigrationExecutor(migrations, runner);
        executor.transaction = 'each';
        try {
          await executor.executePendingMigrations();
          break;
        } catch (err) {
          if (!isLockTimeout(err) || attempt >= MIGRATION_LOCK_RETRIES) throw err;
          await pause(attempt);
        }
      }
    } finally {
      await runner.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`crm:migrate:${schema}`]).catch(() => undefined);
    }
  } finally {
    await runner.release();
    await migrations.destroy();
  }
}

/**
 * Lets the application role read and write what the migrations created, and nothing more: it gets no
 * CREATE on the schema, so a compromised pod cannot change the schema. Granted again after every run, so
 * tables a new migration adds are covered.
 */
export async function grantApplicationRole(dataSource: DataSource, schema: string, role: string): Promise<void> {
  const target = `"${schema}"`;
  await dataSource.query(`GRANT USAGE ON SCHEMA ${target} TO ${role}`);
  await dataSource.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${target} TO ${role}`);
  await dataSource.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${target} TO ${role}`);
}

/** Names of the migrations this build knows that the schema has not recorded as applied. */
export async function pendingMigrations(dataSource: DataSource, schema: string): Promise<string[]> {
  const known = dataSource.migrations.map((m) => m.name ?? m.constructor.name);
  const [{ table }] = await dataSource.query(`SELECT to_regclass($1) AS table`, [`"${schema}".migrations`]);
  const applied = new Set<string>(table ? (await dataSource.query(`SELECT name FROM "${schema}".migrations`)).map((r: { name: string }) => r.name) : []);
  return known.filter((name) => !applied.has(name));
}

/**
 * Pending migrations as the application role sees them. Until the migration run has granted it the schema
 * (it grants after migrating), the schema is unreadable to it: the migrations count as pending.
 */
async function pendingForApplication(dataSource: DataSource, schema: string): Promise<{ pending: string[]; unreadable: boolean }> {
  try {
    return { pending: await pendingMigrations(dataSource, schema), unreadable: false };
  } catch (err) {
    if ((err as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw err;
    return { pending: dataSource.migrations.map((m) => m.name ?? m.constructor.name), unreadable: true };
  }
}

async function connect(spec: DatabaseSpec): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(spec));
  try {
    await dataSource.initialize();
  } catch (err) {
    throw new StartupError(`${describe(spec.url)} refused the connection: ${(err as Error).message}`);
  }
  return dataSource;
}

/** Applies pending migrations and grants the application role, then disconnects: the `migrate` command. */
export async function migrateDatabase(spec: DatabaseSpec): Promise<string[]> {
  await ensureDatabase(spec.url);
  const dataSource = await connect(spec);
  try {
    const pending = await pendingMigrations(dataSource, spec.schema).catch(() => []);
    await migrate(dataSource, spec.schema);
    if (spec.appRole) await grantApplicationRole(dataSource, spec.schema, spec.appRole);
    return pending;
  } finally {
    await dataSource.destroy();
  }
}

/** Waits up to `verifyWaitMs` for another process (the migration Job) to bring the schema up to date. */
async function verifyMigrated(dataSource: DataSource, spec: DatabaseSpec): Promise<void> {
  // A rollout starts the pods and the migration Job together: wait for the Job rather than crash-loop.
  const deadline = Date.now() + (spec.verifyWaitMs ?? 0);
  let state = await pendingForApplication(dataSource, spec.schema);
  while (state.pending.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(VERIFY_POLL_MS, Math.max(deadline - Date.now(), 0))));
    state = await pendingForApplication(dataSource, spec.schema);
  }
  if (state.unreadable) {
    throw new StartupError(
      `this role may not read schema "${spec.schema}"; run the migrate command with DATABASE_APP_ROLE set to it (DATABASE_MIGRATIONS=verify)`,
    );
  }
  if (state.pending.length) {
    throw new StartupError(
      `schema "${spec.schema}" has ${state.pending.length} pending migration(s) (${state.pending.join(', ')}); run the migrate command first (DATABASE_MIGRATIONS=verify)`,
    );
  }
}

/**
 * Connects and makes sure the schema is current before the process serves: migrates it (`run`), or checks
 * that a migration Job already did (`verify`), in which case the role needs no right to create anything.
 */
export async function openDatabase(spec: DatabaseSpec): Promise<DataSource> {
  const verifyOnly = spec.migrationsMode === 'verify';
  if (!verifyOnly) await ensureDatabase(spec.url);
  const dataSource = await connect(spec);
  try {
    if (verifyOnly) {
      await verifyMigrated(dataSource, spec);
    } else {
      await migrate(dataSource, spec.schema);
      if (spec.appRole) await grantApplicationRole(dataSource, spec.schema, spec.appRole);
    }
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }
  return dataSource;
}

/**
 * How a write runs its transaction: on its own, or, given the transaction of an import batch, in a
 * savepoint of it (TypeORM nests transactions as savepoints), so one refused row rolls back alone.
 */
export function transactionOf(dataSource: DataSource, within?: EntityManager): <T>(work: (m: EntityManager) => Promise<T>) => Promise<T> {
  return within ? (work) => within.transaction(work) : (work) => dataSource.transaction(work);
}
