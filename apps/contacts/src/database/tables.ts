import { ERASURE_LEDGER_TABLES } from '@crm/runtime';
import { TableRetention } from '@crm/common';
import { CHANGE_HISTORY_TABLES, OUTBOX_TABLES } from '@crm/messaging';
import { RECORD_ENGINE_TABLES } from '@crm/records';

/** What becomes of every table of the contacts schema over time (docs/deployment.md, "Retention"). */
export const contactsTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  ...CHANGE_HISTORY_TABLES,
  ...['activities', 'companies', 'contacts', 'contact_companies', 'object_records', 'object_types', 'tasks', 'users'].map((table) => ({
    table,
    kept: 'a record a client keeps until it deletes it',
  })),
  ...RECORD_ENGINE_TABLES,
  {
    table: 'imports',
    column: 'completed_at',
    key: 'id',
    setting: 'IMPORTS_RETENTION_DAYS',
    defaultDays: 30,
    // Only finished imports age out; their rows go with them (ON DELETE CASCADE).
    keep: `status NOT IN ('completed', 'failed')`,
    sweptBy: 'retention-job',
  },
  {
    table: 'erasures',
    kept: 'one row per erased person, the receipt (and the suppression) that must outlive the data; grows with erasure requests only',
  },
  { table: 'privacy_keys', kept: 'one row: the key email hashes are made with' },
  { table: 'suppressions', kept: 'one row per suppressed email (its keyed hash) until the suppression is lifted' },
  { table: 'import_rows', kept: 'deleted as the import runs; what is left goes with its import' },
  ...ERASURE_LEDGER_TABLES,
];
