import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ChangeActor, ChangeVia } from './changes/changes';
import type { EventPayload } from './event-catalog';
/**
 * Domain event types (`resource.action`) and their payloads. docs/events.md describes each one; a
 * payload that changes shape gets a new type name rather than a silent change.
 */
export const EventType = {
  ContactCreated: 'contact.created',
  ContactUpdated: 'contact.updated',
  ContactDeleted: 'contact.deleted',
  ContactEnriched: 'contact.enriched',
  ContactCompanyAdded: 'contact.company_added',
  ContactCompanyUpdated: 'contact.company_updated',
  ContactCompanyRemoved: 'contact.company_removed',
  CompanyCreated: 'company.created',
  CompanyUpdated: 'company.updated',
  CompanyDeleted: 'company.deleted',
  CompanyEnriched: 'company.enriched',
  DealCreated: 'deal.created',
  DealUpdated: 'deal.updated',
  DealDeleted: 'deal.deleted',
  DealStageChanged: 'deal.stage_changed',
  DealWon: 'deal.won',
  DealLost: 'deal.lost',
  DealContactAdded: 'deal.contact_added',
  DealContactUpdated: 'deal.contact_updated',
  DealContactRemoved: 'deal.contact_removed',
  ProductCreated: 'product.created',
  ProductUpdated: 'product.updated',
  ProductDeleted: 'product.deleted',
  LineItemCreated: 'line_item.created',
  LineItemUpdated: 'line_item.updated',
  LineItemDeleted: 'line_item.deleted',
  ActivityCreated: 'activity.created',
  ActivityUpdated: 'activity.updated',
  ActivityDeleted: 'activity.deleted',
  TaskCreated: 'task.created',
  TaskUpdated: 'task.updated',
  TaskDeleted: 'task.deleted',
  PipelineCreated: 'pipeline.created',
  PipelineUpdated: 'pipeline.updated',
  PipelineDeleted: 'pipeline.deleted',
  TriggerDealStale: 'trigger.deal.stale',
  ImportCompleted: 'import.completed',
  ApiKeyCreated: 'api_key.created',
  ApiKeyRevoked: 'api_key.revoked',
  WebhookDisabled: 'webhook.disabled',
  ObjectTypeCreated: 'object_type.created',
  ObjectTypeUpdated: 'object_type.updated',
  ObjectRecordCreated: 'object_record.created',
  ObjectRecordUpdated: 'object_record.updated',
  ObjectRecordDeleted: 'object_record.deleted',
  StreamGap: 'stream.gap',
  SystemRestored: 'system.restored',
  PrivacyErased: 'privacy.erased',
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

/** What every event carries besides its type and payload. */
interface EventEnvelope {
  id: string;
  occurred_at: string;
  /** Who made the change, through which channel and request; absent only on events recorded before these existed. */
  actor?: ChangeActor;
  via?: ChangeVia;
  request_id?: string | null;
}

/** An event to record: its type and the payload that type carries (see `event`). */
export type EventDraft<T extends EventType = EventType> = { [K in T]: { type: K; data: EventPayload<K> } }[T];

/**
 * An event as stored in the log, published on NATS and delivered to webhooks: a union discriminated by
 * `type`, so narrowing on the type gives the payload's class.
 */
export type DomainEvent<T extends EventType = EventType> = { [K in T]: EventEnvelope & EventDraft<K> }[T];

/** An event of `type` with `data`, checked against the payload class the catalog names for that type. */
export function event<T extends EventType>(type: T, data: EventPayload<T>): EventDraft<T> {
  return { type, data } as EventDraft<T>;
}

/** What the events about one contact or deal carry for a copy kept from an export (docs/exports.md, "The handoff rule"). */
export class RecordVersion {
  @ApiPropertyOptional({
    type: Number,
    description: "The record's version after this change (absent on a deletion): apply the event unless the copy you hold has a greater one.",
  })
  version?: number;
}

export const RECORD_DESCRIPTION = 'The record after the change, as POST /<object>/query answers it without fields.';

export class ContactCreatedData extends RecordVersion {
  @ApiProperty({ type: String })
  contact_id!: string;
  @ApiProperty({ type: String })
  email!: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: RECORD_DESCRIPTION })
  record?: object;
}

export class DealStageChangedData {
  @ApiProperty({ type: String })
  deal_id!: string;
  @ApiProperty({ type: String, nullable: true })
  from_stage_id!: string | null;
  @ApiProperty({ type: String })
  to_stage_id!: string;
}

export class ApiKeyCreatedData {
  @ApiProperty({ type: String })
  key_id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  scope!: string;
  @ApiProperty({ type: String })
  last4!: string;
}

export class ApiKeyRevokedData {
  @ApiProperty({ type: String })
  key_id!: string;
}
