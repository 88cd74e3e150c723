import { DeliveryView } from '@crm/contracts';
import { Delivery } from './delivery.entity';

export function presentDelivery(d: Delivery): DeliveryView {
  return {
    id: d.id,
    subscription_id: d.subscriptionId,
    event_id: d.eventId,
    attempt: d.attempt,
    status: d.status,
    http_status: d.httpStatus,
    error: d.error,
    duration_ms: d.durationMs,
    created_at: d.createdAt.toISOString(),
  };
}
