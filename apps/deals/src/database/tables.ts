import { ERASURE_LEDGER_TABLES } from '@crm/runtime';
import { TableRetention } from '@crm/common';
import { BUILT_IN_ENTRIES } from '@crm/contracts';
import { CHANGE_HISTORY_TABLES, OUTBOX_TABLES } from '@crm/messaging';
import { RECORD_ENGINE_TABLES } from '@crm/records';

/** What becomes of every table of the deals schema over time (docs/deployment.md, "Retention"). */
export const dealsTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  ...CHANGE_HISTORY_TABLES,
  // Each object this service keeps, in the table its slug names (the registry's), and the tables of what hangs off them.
  ...[...BUILT_IN_ENTRIES.filter((o) => o.service === 'deals').map((o) => o.slug), 'deal_contacts', 'line_items'].map((table) => ({
    table,
    kept: 'a record a client keeps until it deletes it',
  })),
  ...RECORD_ENGINE_TABLES,
  { table: 'stage_history', kept: "a deal's stage moves, read by the pipeline report; deleted with the deal" },
  {
    table: 'import_batches',
    column: 'created_at',
    key: 'ctid',
    setting: 'IMPORTS_RETENTION_DAYS',
    defaultDays: 30,
    sweptBy: 'retention-job',
  },
  ...ERASURE_LEDGER_TABLES,
];
