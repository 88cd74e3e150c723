import Redis from 'ioredis';
import { connect } from 'nats';
import { Client } from 'pg';
import { rmSync } from 'fs';
import { runOpenApiDocumentPath, templateDatabaseName, testRunPrefix } from './test-run';

// Jest loads this file outside the module map, so the defaults of libs/common/src/config.ts are repeated.
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/crm';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Drops the run's template database, then fails the run if its tests left a database, a JetStream stream or
 * Redis keys behind (each suite must drop what it made: databases, roles, streams, keys), and removes them
 * so they do not pile up.
 */
export default async function globalTeardown(): Promise<void> {
  const prefix = testRunPrefix();
  if (prefix === 't') return; // no run id: nothing can be attributed to this run
  rmSync(runOpenApiDocumentPath()!, { force: true });
  const leftovers: string[] = [];

  const admin = new Client({ connectionString: new URL('/postgres', process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL).toString() });
  await admin.connect();
  try {
    // The run's template (test/support/template-database.ts) is the run's own to drop, not a leftover.
    const template = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [templateDatabaseName()]);
    if (template.rowCount) {
      await admin.query(`ALTER DATABASE "${templateDatabaseName()}" WITH IS_TEMPLATE false`);
      await admin.query(`DROP DATABASE "${templateDatabaseName()}" WITH (FORCE)`);
    }
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`crm\\_${prefix}%`]);
    for (const { datname } of rows) {
      leftovers.push(`database ${datname}`);
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    const roles = await admin.query<{ rolname: string }>(`SELECT rolname FROM pg_roles WHERE rolname LIKE $1`, [`${prefix}%`]);
    for (const { rolname } of roles.rows) {
      leftovers.push(`role ${rolname}`);
      await admin.query(`DROP ROLE IF EXISTS "${rolname}"`);
    }
  } finally {
    await admin.end();
  }

  const nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    for await (const stream of jsm.streams.list()) {
      if (!stream.config.name.startsWith(prefix.toUpperCase())) continue;
      leftovers.push(`stream ${stream.config.name}`);
      await jsm.streams.delete(stream.config.name);
    }
  } finally {
    await nc.close();
  }

  const redis = new Redis(process.env.REDIS_URL ?? DEFAULT_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) {
      leftovers.push(`${keys.length} Redis keys (${keys.slice(0, 3).join(', ')}…)`);
      await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }

  if (leftovers.length) throw new Error(`tests left behind:\n  ${leftovers.join('\n  ')}`);
}
