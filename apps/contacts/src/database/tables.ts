import { Env, intVar, RetentionSettings, TableRetention } from '@crm/common';
import { CHANGE_HISTORY_TABLES, OUTBOX_TABLES } from '@crm/messaging';
import { loadChangeSettings } from '@crm/records';

/** What becomes of every table of the contacts schema over time (docs/deployment.md, "Retention"). */
export const contactsTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  ...CHANGE_HISTORY_TABLES,
  ...['activities', 'companies', 'contacts', 'contact_companies', 'object_records', 'object_types', 'tasks', 'users'].map((table) => ({
    table,
    kept: 'a record a client keeps until it deletes it',
  })),
  { table: 'association_types', kept: 'one row per association type' },
  { table: 'built_in_custom_fields', kept: 'one row per custom field definition' },
  { table: 'search_words', kept: 'one row per distinct word of the records: grows with the vocabulary, not with writes' },
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
  { table: 'import_rows', kept: 'deleted as the import runs; what is left goes with its import' },
];

/** The contacts service's RetentionJob: at the change history's pace (CHANGES_RETENTION_INTERVAL_MS, _BATCH_SIZE). */
export function contactsRetention(env: Env): RetentionSettings {
  const changes = loadChangeSettings(env);
  return {
    intervalMs: changes.changesRetentionIntervalMs,
    batchSize: changes.changesRetentionBatchSize,
    // A finished import (its counts and first errors) is kept this many days after it completed; 0 keeps it.
    days: { IMPORTS_RETENTION_DAYS: intVar(env, 'IMPORTS_RETENTION_DAYS', 30, { min: 0, max: 36_500 }) },
  };
}
