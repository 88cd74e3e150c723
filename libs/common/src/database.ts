import { Client } from 'pg';
import { DataSource, DataSourceOptions, MixedList } from 'typeorm';
import { StartupError } from './startup';

type ClassList = MixedList<Function>;

export interface DatabaseSpec {
  url: string;
  /** The PostgreSQL schema this service owns; no other service reads it. */
  schema: string;
  entities: ClassList;
  migrations: ClassList;
  poolSize?: number;
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
      // Unqualified names in migrations and raw queries resolve to the service's own schema.
      options: `-c search_path=${spec.schema},public`,
      max: spec.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
    },
  };
}

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so replicas starting together apply each
 * migration once and the others wait for it.
 */
export async function migrate(dataSource: DataSource, schema: string): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query(`SELECT pg_advisory_lock(hashtext($1))`, [`crm:migrate:${schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await runner.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`crm:migrate:${schema}`]).catch(() => undefined);
    await runner.release();
  }
}

/** Ensures the database, connects, and migrates: what every service does before it serves. */
export async function openDatabase(spec: DatabaseSpec): Promise<DataSource> {
  await ensureDatabase(spec.url);
  const dataSource = new DataSource(dataSourceOptions(spec));
  try {
    await dataSource.initialize();
  } catch (err) {
    throw new StartupError(`${describe(spec.url)} refused the connection: ${(err as Error).message}`);
  }
  await migrate(dataSource, spec.schema);
  return dataSource;
}
