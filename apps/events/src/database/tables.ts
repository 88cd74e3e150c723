import { ERASURE_LEDGER_TABLES } from '@crm/runtime';
import { TableRetention } from '@crm/common';
import { OUTBOX_TABLES } from '@crm/messaging';

/** What becomes of every table of the events schema over time (docs/deployment.md, "Retention"). */
export const eventsTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  {
    table: 'events',
    column: 'recorded_at',
    key: 'position',
    setting: 'EVENTS_RETENTION_DAYS',
    defaultDays: 0,
    sweptBy: 'EventRetention (apps/events/src/log/event-retention.ts)',
  },
  { table: 'log_checkpoint', kept: 'one row: where the log has read the stream to' },
  ...ERASURE_LEDGER_TABLES,
  {
    table: 'exports',
    column: 'completed_at',
    key: 'id',
    setting: 'EXPORTS_RETENTION_HOURS',
    defaultDays: 24,
    unit: 'hours',
    sweptBy: 'ExportRunner (apps/events/src/exports/export-runner.ts)',
  },
  { table: 'export_pieces', kept: "the files' pieces of each export: deleted with it (ON DELETE CASCADE)" },
];
