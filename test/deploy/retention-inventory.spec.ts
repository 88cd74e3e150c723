import { isRetained, TableRetention } from '@crm/common';
import { Client } from 'pg';
import { contactsApp } from '../../apps/contacts/src/contacts.app';
import { dealsApp } from '../../apps/deals/src/deals.app';
import { eventsApp } from '../../apps/events/src/events.app';
import { gatewayTables } from '../../apps/gateway/src/gateway.app';
import { webhooksApp } from '../../apps/webhooks/src/webhooks.app';
import { createFromTemplate } from '../support/template-database';
import { dropNamespace, testEnv } from '../support/stack';

const DECLARED: Record<string, TableRetention[]> = {
  contacts: contactsApp.retention!.tables,
  deals: dealsApp.retention!.tables,
  events: eventsApp.retention!.tables,
  webhooks: webhooksApp(testEnv()).retention!.tables,
  gateway: gatewayTables,
};

/**
 * Every table the migrations make is declared by its service as retained (a setting, a default, a job that
 * deletes) or kept (and why): a new table that grows without a retention fails here. Read from the run's
 * template database (a copy of it), every schema as the migrations leave it.
 */
describe('table retention inventory', () => {
  const env = testEnv();
  let pg: Client;
  beforeAll(async () => {
    await createFromTemplate(env);
    pg = new Client({ connectionString: env.DATABASE_URL });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await dropNamespace(env);
  });

  for (const [schema, declared] of Object.entries(DECLARED)) {
    it(`${schema}: every table declared, each retained one by a column and key it has`, async () => {
      const { rows } = await pg.query<{ table: string; columns: string[] }>(
        `SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
           FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
          WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p') AND c.relname <> 'migrations'
          GROUP BY c.relname ORDER BY c.relname`,
        [schema],
      );
      expect(declared.map((t) => t.table).sort()).toEqual(rows.map((r) => r.table));
      const columns = new Map(rows.map((r) => [r.table, new Set([...r.columns, 'ctid'])]));
      for (const t of declared.filter(isRetained)) {
        expect([t.table, columns.get(t.table)?.has(t.column), columns.get(t.table)?.has(t.key)]).toEqual([t.table, true, true]);
      }
    });
  }

  it('fails on a table nobody declared', () => {
    const tables = ['contacts', 'audit_trail'];
    const declared = DECLARED.contacts.map((t) => t.table);
    expect(tables.filter((t) => !declared.includes(t))).toEqual(['audit_trail']);
  });
});
