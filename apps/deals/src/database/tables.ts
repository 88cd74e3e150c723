import { Env, intVar, RetentionSettings, TableRetention } from '@crm/common';
import { CHANGE_HISTORY_TABLES, OUTBOX_TABLES } from '@crm/messaging';
import { loadChangeSettings } from '@crm/records';

/** What becomes of every table of the deals schema over time (docs/deployment.md, "Retention"). */
export const dealsTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  ...CHANGE_HISTORY_TABLES,
  ...['deals', 'deal_contacts', 'pipelines', 'stages'].map((table) => ({ table, kept: 'a record a client keeps until it deletes it' })),
  { table: 'association_types', kept: 'one row per association type' },
  { table: 'built_in_custom_fields', kept: 'one row per custom field definition' },
  { table: 'search_words', kept: 'one row per distinct word of the records: grows with the vocabulary, not with writes' },
  { table: 'stage_history', kept: "a deal's stage moves, read by the pipeline report; deleted with the deal" },
  {
    table: 'import_batches',
    column: 'created_at',
    key: 'ctid',
    setting: 'IMPORTS_RETENTION_DAYS',
    defaultDays: 30,
    sweptBy: 'retention-job',
  },
];

/** The deals service's RetentionJob: at the change history's pace (CHANGES_RETENTION_INTERVAL_MS, _BATCH_SIZE). */
export function dealsRetention(env: Env): RetentionSettings {
  const changes = loadChangeSettings(env);
  return {
    intervalMs: changes.changesRetentionIntervalMs,
    batchSize: changes.changesRetentionBatchSize,
    // A finished import (its counts and first errors) is kept this many days after it completed; 0 keeps it.
    days: { IMPORTS_RETENTION_DAYS: intVar(env, 'IMPORTS_RETENTION_DAYS', 30, { min: 0, max: 36_500 }) },
  };
}
