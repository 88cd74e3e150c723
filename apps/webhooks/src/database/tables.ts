import { ERASURE_LEDGER_TABLES } from '@crm/runtime';
import { Env, intVar, RetentionSettings, TableRetention } from '@crm/common';
import { OUTBOX_TABLES } from '@crm/messaging';

/** What becomes of every table of the webhooks schema over time (docs/deployment.md, "Retention"). */
export const webhooksTables: TableRetention[] = [
  ...OUTBOX_TABLES,
  { table: 'subscriptions', kept: 'a record a client keeps until it deletes it' },
  { table: 'intake_checkpoint', kept: 'one row: where the intake has read the stream to' },
  {
    table: 'deliveries',
    column: 'created_at',
    key: 'id',
    setting: 'WEBHOOKS_DELIVERY_RETENTION_DAYS',
    defaultDays: 30,
    sweptBy: 'DeliveryRetentionJob (apps/webhooks/src/deliveries/delivery-retention.job.ts)',
  },
  {
    table: 'webhook_events',
    column: 'received_at',
    key: 'position',
    setting: 'WEBHOOKS_EVENT_RETENTION_DAYS',
    defaultDays: 30,
    // An event a subscription that is not disabled has yet to pass, or one with a delivery still pending, stays.
    keep: `position > (SELECT min(bookmark) FROM subscriptions WHERE status <> 'disabled')
      OR EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = webhook_events.id AND d.status = 'pending')`,
    sweptBy: 'retention-job',
  },
  ...ERASURE_LEDGER_TABLES,
];

/** The webhooks service's RetentionJob: at the delivery log's pace (WEBHOOKS_RETENTION_INTERVAL_MS, _BATCH_SIZE). */
export function webhooksRetention(settings: { retentionIntervalMs: number; retentionBatchSize: number }, env: Env): RetentionSettings {
  return {
    intervalMs: settings.retentionIntervalMs,
    batchSize: settings.retentionBatchSize,
    // The copy of each event the webhooks service keeps for deliveries and replays.
    days: { WEBHOOKS_EVENT_RETENTION_DAYS: intVar(env, 'WEBHOOKS_EVENT_RETENTION_DAYS', 30, { min: 0, max: 36_500 }) },
  };
}
