import { Ops } from '@crm/contracts';
import { COMMON_ERASURE_STORES, ErasureDeclaration, erasureStepModule, redactingStore } from '@crm/runtime';
import { INTAKE_CONSUMER } from '../event-log/event-intake.service';

/**
 * The webhooks service's copies: each kept event (what a replay sends) is blanked when it is about the
 * contact and loses the person's values otherwise; delivery records lose them from their error text.
 */
export const webhooksErasureDeclaration: ErasureDeclaration = {
  service: 'webhooks',
  stores: [
    redactingStore('webhook_events', {
      table: 'webhook_events',
      key: 'id',
      columns: { body: 'json-text' },
      owned: `r.type LIKE 'contact.%' AND (r.body::jsonb)->'data'->>'contact_id' = $2`,
      done: `coalesce(((r.body::jsonb)->>'redacted')::boolean, false)`,
    }),
    redactingStore('deliveries', { table: 'deliveries', key: 'id', columns: { error: 'text' } }),
    ...COMMON_ERASURE_STORES,
  ],
  noPersonalData: { subscriptions: 'receivers, not people a CRM holds', intake_checkpoint: 'a stream sequence' },
  streamCopy: { consumer: INTAKE_CONSUMER, checkpointTable: 'intake_checkpoint' },
};

export const WebhooksErasureModule = erasureStepModule(Ops.privacyInternal.webhooks, webhooksErasureDeclaration);
