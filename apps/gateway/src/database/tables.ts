import { TableRetention } from '@crm/common';
import { OUTBOX_TABLES } from '@crm/messaging';

/** What becomes of every table of the gateway schema over time (docs/deployment.md, "Retention"). */
export const gatewayTables: TableRetention[] = [
  ...OUTBOX_TABLES.filter((t) => t.table === 'outbox'),
  { table: 'api_keys', kept: 'one row per key; a revoked key stays, so its id is never reused' },
  {
    table: 'idempotency_keys',
    column: 'created_at',
    key: 'ctid',
    setting: 'IDEMPOTENCY_TTL_HOURS',
    defaultDays: 24,
    unit: 'hours',
    sweptBy: 'idempotency purge (apps/gateway/src/idempotency/idempotency.hook.ts)',
  },
];
