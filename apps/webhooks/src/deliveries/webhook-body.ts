import { ChangeOrigin, DomainEvent } from '@crm/contracts';

/**
 * The JSON body every delivery and ping carries (docs/webhooks.md), fields in this order. An event
 * published before producers stamped an origin carries null actor, via and request_id, so every body
 * has the same fields.
 */
export function webhookBody(event: Pick<DomainEvent, 'id' | 'occurred_at'> & Partial<ChangeOrigin> & { type: string; data: object }) {
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurred_at,
    actor: event.actor ?? null,
    via: event.via ?? null,
    request_id: event.request_id ?? null,
    data: event.data,
  };
}
