import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { snapshot } from '../deploy/schema-snapshot';
import { eventually } from './api-client';
import { startStack, TestStack } from './stack';
import { adminDatabaseUrl } from './template-database';
import { templateDatabaseName } from './test-run';

const SCHEMAS = ['contacts', 'deals', 'events', 'webhooks', 'gateway'];

/** Every table's row count and the applied migrations of each schema: what a database holds after a start. */
async function contents(ds: DataSource): Promise<Record<string, unknown>> {
  const tables: Array<{ name: string }> = await ds.query(
    `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
      WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1`,
    [SCHEMAS],
  );
  const counts: Record<string, unknown> = {};
  for (const { name } of tables) counts[name] = (await ds.query(`SELECT count(*)::int AS n FROM ${name}`))[0].n;
  for (const schema of SCHEMAS) {
    counts[`${schema} migrations`] = (await ds.query(`SELECT name FROM "${schema}".migrations ORDER BY id`)).map((r: { name: string }) => r.name);
    counts[`${schema} schema`] = await snapshot(ds, schema);
  }
  return counts;
}

/**
 * A stack starts on a copy of the run's template database (template-database.ts) and must find there
 * exactly what a first start on an empty database leaves: the same schemas, the same migrations applied,
 * the same rows (the start's own, such as the bootstrap API key; none from the template).
 */
describe("the run's template database", () => {
  let copied: TestStack;
  let empty: TestStack;
  beforeAll(async () => {
    copied = await startStack();
    empty = await startStack({ emptyDatabase: true });
  });
  afterAll(async () => {
    await copied?.stop();
    await empty?.stop();
  });

  it('is made once and kept as a template while the run lasts', async () => {
    const admin = new Client({ connectionString: adminDatabaseUrl() });
    await admin.connect();
    try {
      const { rows } = await admin.query(`SELECT datistemplate FROM pg_database WHERE datname = $1`, [templateDatabaseName()]);
      expect(rows).toEqual([{ datistemplate: true }]);
    } finally {
      await admin.end();
    }
  });

  it('gives a stack the database a first start on an empty one makes', async () => {
    // The start's own events reach the log and the webhook intake after it; rows the template would have
    // added never go away, so the two are read until they agree, and compared as last read.
    const read = () => Promise.all([contents(copied.services.contacts!.dataSource), contents(empty.services.contacts!.dataSource)]);
    let [fromTemplate, fromNothing] = await read();
    await eventually(
      async () => {
        [fromTemplate, fromNothing] = await read();
        return JSON.stringify(fromTemplate) === JSON.stringify(fromNothing) ? true : undefined;
      },
      120_000,
      200,
    ).catch(() => undefined);
    expect(Object.keys(fromTemplate).length).toBeGreaterThan(SCHEMAS.length * 3);
    expect(fromTemplate).toEqual(fromNothing);
  });

  it('holds one API key per stack, the one each was started with', async () => {
    for (const stack of [copied, empty]) {
      const keys = await stack.services.contacts!.dataSource.query(`SELECT count(*)::int AS n FROM gateway.api_keys`);
      expect(keys).toEqual([{ n: 1 }]);
      expect((await stack.api.get('/contacts')).status).toBe(200);
    }
  });
});
