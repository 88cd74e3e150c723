import { WebhookView } from '@crm/contracts';
import { Subscription } from './subscription.entity';

export function presentSubscription(s: Subscription): WebhookView {
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    event_types: s.eventTypes,
    filter: s.filter,
    status: s.status,
    failure_count: s.failureCount,
    last_delivered_at: s.lastDeliveredAt?.toISOString() ?? null,
    metadata: s.metadata,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}
