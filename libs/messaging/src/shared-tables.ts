import { TableRetention } from '@crm/common';

/** What becomes of the tables OUTBOX_MIGRATIONS make, in every service that publishes events. */
export const OUTBOX_TABLES: TableRetention[] = [
  { table: 'outbox', kept: 'a row is deleted once the event log and the webhook intake have read past it (docs/events.md, "The relay")' },
  {
    table: 'dead_events',
    kept: 'an event parked after its retries, until an operator retries or drops it (npm run dead-events); grows only with failures',
  },
  {
    table: 'request_outcomes',
    column: 'created_at',
    key: 'ref',
    setting: 'IDEMPOTENCY_TTL_HOURS',
    defaultDays: 24,
    unit: 'hours',
    sweptBy: 'request outcomes purge (libs/runtime/src/request-outcome.step.ts)',
  },
];

/** The change history's table (CHANGE_HISTORY_MIGRATIONS), in the services that keep records. */
export const CHANGE_HISTORY_TABLES: TableRetention[] = [
  {
    table: 'changes',
    column: 'occurred_at',
    key: 'id',
    setting: 'CHANGES_RETENTION_DAYS',
    defaultDays: 0,
    sweptBy: 'ChangeRetentionJob (libs/records/src/changes/change-retention.job.ts)',
  },
];
