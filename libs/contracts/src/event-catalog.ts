import { PrivacyErasedData } from './privacy/privacy';
import { ContactCompanyEventData, ContactCompanyUpdatedData, DealContactEventData, DealContactUpdatedData } from './associations/associations';
import { ActivityEventData, CompanyDeletedData, ContactDeletedData } from './contacts';
import { CompanyCreatedData, CompanyUpdatedData, ContactUpdatedData, TaskEventData } from './contacts/views';
import {
  DealCreatedData,
  DealDeletedData,
  DealLostData,
  DealStaleData,
  DealUpdatedData,
  DealWonData,
  PipelineChangedData,
  PipelineUpdatedData,
} from './deals/events';
import { ApiKeyCreatedData, ApiKeyRevokedData, ContactCreatedData, DealStageChangedData, EventType } from './events';
import { ObjectRecordEventData, ObjectTypeEventData } from './schema/field-types';
import { LineItemEventData, LineItemUpdatedData, ProductCreatedData, ProductDeletedData, ProductUpdatedData } from './products';
import { ImportCompletedData } from './imports/imports';
import { WebhookDisabledData } from './webhooks/webhook.views';
import { StreamGapData, SystemRestoredData } from './event-log/stream-markers';

export interface EventDescription {
  summary: string;
  /** The class of `data`; null for a type the specification reserves and nothing emits yet. */
  data: (new () => object) | null;
}

/**
 * Every event type with its payload class: the one table the AsyncAPI document is generated from. A
 * new event type does not compile until it is described here.
 */
export const EVENT_CATALOG = {
  [EventType.ContactCreated]: { summary: 'A contact was created.', data: ContactCreatedData },
  [EventType.ContactUpdated]: { summary: 'A contact changed (PATCH, merge, capture).', data: ContactUpdatedData },
  [EventType.ContactDeleted]: { summary: 'A contact was deleted, or removed by a merge (`merged_into`).', data: ContactDeletedData },
  [EventType.ContactEnriched]: { summary: 'Reserved; not emitted yet.', data: null },
  [EventType.ContactCompanyAdded]: {
    summary: 'A company was associated with a contact (POST /contacts/:id/companies, or a new company_id).',
    data: ContactCompanyEventData,
  },
  [EventType.ContactCompanyUpdated]: {
    summary: "A contact's company association changed role or became, or stopped being, primary.",
    data: ContactCompanyUpdatedData,
  },
  [EventType.ContactCompanyRemoved]: {
    summary: 'A company association of a contact was removed (DELETE, a replaced company_id, or a deletion or merge).',
    data: ContactCompanyEventData,
  },
  [EventType.CompanyCreated]: { summary: 'A company was created.', data: CompanyCreatedData },
  [EventType.CompanyUpdated]: { summary: 'A company changed.', data: CompanyUpdatedData },
  [EventType.CompanyDeleted]: { summary: 'A company was deleted.', data: CompanyDeletedData },
  [EventType.CompanyEnriched]: { summary: 'Reserved; not emitted yet.', data: null },
  [EventType.DealCreated]: { summary: 'A deal was created.', data: DealCreatedData },
  [EventType.DealUpdated]: { summary: 'A deal changed.', data: DealUpdatedData },
  [EventType.DealDeleted]: { summary: 'A deal was deleted.', data: DealDeletedData },
  [EventType.DealStageChanged]: { summary: 'A deal moved to another stage.', data: DealStageChangedData },
  [EventType.DealWon]: { summary: 'A deal became won.', data: DealWonData },
  [EventType.DealLost]: { summary: 'A deal became lost.', data: DealLostData },
  [EventType.DealContactAdded]: {
    summary: 'A contact was associated with a deal (POST /deals/:id/contacts, or a new contact_id).',
    data: DealContactEventData,
  },
  [EventType.DealContactUpdated]: { summary: "A deal's contact association changed role or became, or stopped being, primary.", data: DealContactUpdatedData },
  [EventType.DealContactRemoved]: {
    summary: 'A contact association of a deal was removed (DELETE, a replaced contact_id, or a deletion or merge).',
    data: DealContactEventData,
  },
  [EventType.ProductCreated]: { summary: 'A product was created.', data: ProductCreatedData },
  [EventType.ProductUpdated]: { summary: 'A product changed.', data: ProductUpdatedData },
  [EventType.ProductDeleted]: { summary: 'A product was deleted; line items that sold it keep their name and prices.', data: ProductDeletedData },
  [EventType.LineItemCreated]: { summary: 'A line item was added to a deal.', data: LineItemEventData },
  [EventType.LineItemUpdated]: { summary: "A deal's line item changed.", data: LineItemUpdatedData },
  [EventType.LineItemDeleted]: { summary: 'A line item was removed from a deal.', data: LineItemEventData },
  [EventType.ActivityCreated]: { summary: 'An activity was logged.', data: ActivityEventData },
  [EventType.ActivityUpdated]: { summary: 'An activity changed.', data: ActivityEventData },
  [EventType.ActivityDeleted]: { summary: 'An activity was deleted.', data: ActivityEventData },
  [EventType.TaskCreated]: { summary: 'A task was created.', data: TaskEventData },
  [EventType.TaskUpdated]: { summary: 'A task changed.', data: TaskEventData },
  [EventType.TaskDeleted]: { summary: 'A task was deleted.', data: TaskEventData },
  [EventType.PipelineCreated]: { summary: 'A pipeline was created.', data: PipelineChangedData },
  [EventType.PipelineUpdated]: { summary: 'A pipeline or its stages changed.', data: PipelineUpdatedData },
  [EventType.PipelineDeleted]: { summary: 'A pipeline was deleted.', data: PipelineChangedData },
  [EventType.TriggerDealStale]: { summary: 'An open deal has had no activity for longer than the threshold.', data: DealStaleData },
  [EventType.ImportCompleted]: { summary: 'An import finished (completed, or failed as a whole), with its counts.', data: ImportCompletedData },
  [EventType.ApiKeyCreated]: { summary: 'An API key was created (API, CLI or bootstrap).', data: ApiKeyCreatedData },
  [EventType.ApiKeyRevoked]: { summary: 'An API key was revoked.', data: ApiKeyRevokedData },
  [EventType.WebhookDisabled]: { summary: 'A webhook subscription was disabled after repeated failures.', data: WebhookDisabledData },
  [EventType.ObjectTypeCreated]: { summary: 'A custom object was defined.', data: ObjectTypeEventData },
  [EventType.ObjectTypeUpdated]: { summary: 'An object (custom or built-in) changed or gained a field.', data: ObjectTypeEventData },
  [EventType.ObjectRecordCreated]: { summary: 'A custom object record was created.', data: ObjectRecordEventData },
  [EventType.ObjectRecordUpdated]: { summary: 'A custom object record changed.', data: ObjectRecordEventData },
  [EventType.ObjectRecordDeleted]: { summary: 'A custom object record was deleted.', data: ObjectRecordEventData },
  [EventType.StreamGap]: { summary: 'Events were lost for good between two stream sequences (a stream reset nothing could repair).', data: StreamGapData },
  [EventType.SystemRestored]: { summary: 'The databases were restored to an earlier point; events after it were skipped.', data: SystemRestoredData },
  [EventType.PrivacyErased]: {
    summary: 'A person was erased (docs/privacy.md): receivers erase their copies of the contact. Only the contact id and the erasure id.',
    data: PrivacyErasedData,
  },
} satisfies Record<EventType, EventDescription>;

/** The payload of one event type: an instance of the class its catalog entry names (never, for a reserved type). */
export type EventPayload<T extends EventType> = (typeof EVENT_CATALOG)[T]['data'] extends new () => infer D ? D : never;

/**
 * What a caller must be able to read to see an event of each type (GET /events, POST /events/query,
 * list_events) or to subscribe a webhook to it: the resource of the object it is about, and for an
 * association both objects' (docs/events.md, "Who sees which events"). `objects.:object` is the custom
 * object the event's `data.object` names.
 */
export const EVENT_READS: Record<EventType, readonly string[]> = {
  [EventType.ContactCreated]: ['contacts'],
  [EventType.ContactUpdated]: ['contacts'],
  [EventType.ContactDeleted]: ['contacts'],
  [EventType.ContactEnriched]: ['contacts'],
  [EventType.ContactCompanyAdded]: ['contacts', 'companies'],
  [EventType.ContactCompanyUpdated]: ['contacts', 'companies'],
  [EventType.ContactCompanyRemoved]: ['contacts', 'companies'],
  [EventType.CompanyCreated]: ['companies'],
  [EventType.CompanyUpdated]: ['companies'],
  [EventType.CompanyDeleted]: ['companies'],
  [EventType.CompanyEnriched]: ['companies'],
  [EventType.DealCreated]: ['deals'],
  [EventType.DealUpdated]: ['deals'],
  [EventType.DealDeleted]: ['deals'],
  [EventType.DealStageChanged]: ['deals'],
  [EventType.DealWon]: ['deals'],
  [EventType.DealLost]: ['deals'],
  [EventType.DealContactAdded]: ['deals', 'contacts'],
  [EventType.DealContactUpdated]: ['deals', 'contacts'],
  [EventType.DealContactRemoved]: ['deals', 'contacts'],
  [EventType.ProductCreated]: ['products'],
  [EventType.ProductUpdated]: ['products'],
  [EventType.ProductDeleted]: ['products'],
  [EventType.LineItemCreated]: ['deals'],
  [EventType.LineItemUpdated]: ['deals'],
  [EventType.LineItemDeleted]: ['deals'],
  [EventType.ActivityCreated]: ['activities'],
  [EventType.ActivityUpdated]: ['activities'],
  [EventType.ActivityDeleted]: ['activities'],
  [EventType.TaskCreated]: ['tasks'],
  [EventType.TaskUpdated]: ['tasks'],
  [EventType.TaskDeleted]: ['tasks'],
  [EventType.PipelineCreated]: ['pipelines'],
  [EventType.PipelineUpdated]: ['pipelines'],
  [EventType.PipelineDeleted]: ['pipelines'],
  [EventType.TriggerDealStale]: ['deals'],
  [EventType.ImportCompleted]: ['imports'],
  [EventType.ApiKeyCreated]: ['apikeys'],
  [EventType.ApiKeyRevoked]: ['apikeys'],
  [EventType.WebhookDisabled]: ['webhooks'],
  [EventType.ObjectTypeCreated]: ['schema'],
  [EventType.ObjectTypeUpdated]: ['schema'],
  [EventType.ObjectRecordCreated]: ['objects.:object'],
  [EventType.ObjectRecordUpdated]: ['objects.:object'],
  [EventType.ObjectRecordDeleted]: ['objects.:object'],
  // Markers about the log itself: every key that reads events sees them.
  [EventType.StreamGap]: [],
  [EventType.SystemRestored]: [],
  [EventType.PrivacyErased]: ['contacts'],
};
