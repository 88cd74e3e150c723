import type { ChangeSet } from '@crm/common';
import type { ActivityEventData, ActivitySummaryView, ActivityView } from '@crm/contracts';
import { Activity } from './activity.entity';

export function presentActivitySummary(activity: Activity): ActivitySummaryView {
  return {
    id: activity.id,
    type: activity.type,
    status: activity.status,
    subject: activity.subject,
    occurred_at: activity.occurredAt.toISOString(),
    created_at: activity.createdAt.toISOString(),
    updated_at: activity.updatedAt.toISOString(),
  };
}

export function presentActivity(activity: Activity): ActivityView {
  return {
    id: activity.id,
    type: activity.type,
    status: activity.status,
    subject: activity.subject,
    body: activity.body,
    occurred_at: activity.occurredAt.toISOString(),
    contact_id: activity.contactId,
    deal_id: activity.dealId,
    metadata: activity.metadata ?? {},
    custom_fields: activity.customFields ?? {},
    created_at: activity.createdAt.toISOString(),
    updated_at: activity.updatedAt.toISOString(),
  };
}

/** The data of an activity event; an update's carries what it changed (`changes`). */
export function activityEventData(activity: Pick<Activity, 'id' | 'type' | 'contactId' | 'dealId' | 'occurredAt'>, changes?: ChangeSet): ActivityEventData {
  return {
    activity_id: activity.id,
    type: activity.type,
    contact_id: activity.contactId,
    deal_id: activity.dealId,
    occurred_at: activity.occurredAt.toISOString(),
    ...(changes ? { changed: changes.changed, previous: changes.previous, current: changes.current } : {}),
  };
}
