import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsDefined, IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';
import { IfPresent, IfPresentAndNotNull, IsIdOf, IsOneOf, MetadataInput, NonEmptyText, Rules } from '../dto-helpers';
import { EVENT_TYPES } from '../events';
import { IsMetadata } from '../metadata';
import { PageQuery } from '../paging';

export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const DELIVERY_STATUSES = ['success', 'failed', 'pending'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WEBHOOK_NAME_MAX_LENGTH = 200;
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_EVENT_TYPES_MAX = 100;
/** Standard Webhooks: `whsec_` followed by the base64 of a 24 to 64 byte key. */
export const SIGNING_SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;
const SECRET_MESSAGE = 'secret must be whsec_ followed by the base64 of 24 to 64 random bytes';
const Secret = () => Rules(IsString({ message: SECRET_MESSAGE }), Matches(SIGNING_SECRET_SHAPE, { message: SECRET_MESSAGE }));

/** `event_types`; the message for an empty list tells how to ask for every type, which differs between create and update. */
const EventTypes = (emptyMessage: string) =>
  Rules(
    IsArray({ message: 'event_types must be an array of event types' }),
    ArrayMinSize(1, { message: emptyMessage }),
    ArrayMaxSize(WEBHOOK_EVENT_TYPES_MAX, { message: `event_types may list at most ${WEBHOOK_EVENT_TYPES_MAX} types` }),
    ArrayUnique({ message: 'event_types must not repeat a type' }),
    IsIn(EVENT_TYPES, { each: true, message: 'event_types may only contain known event types (see GET /events)' }),
  );

export class CreateWebhookDto {
  @IsDefined({ message: 'name is required' })
  @NonEmptyText(WEBHOOK_NAME_MAX_LENGTH)
  name!: string;

  @IsDefined({ message: 'url is required' })
  @NonEmptyText(WEBHOOK_URL_MAX_LENGTH)
  url!: string;

  /** Omitted: one is generated. When present it must be valid; null is not a way to leave it out. */
  @IfPresent()
  @Secret()
  secret?: string;

  /** Omitted or null: every event type. */
  @IsOptional()
  @EventTypes('event_types must not be empty; omit it (or send null) to receive every event type')
  event_types?: string[] | null;

  /**
   * Omitted or null: every event of the chosen types. Otherwise the query language over the event as
   * delivered (docs/webhooks.md); the webhooks service checks its paths against the chosen types.
   */
  @IsOptional()
  @IsObject({ message: 'filter must be an object (or null for none)' })
  filter?: Record<string, unknown> | null;

  @MetadataInput()
  metadata?: Record<string, unknown>;
}

export class UpdateWebhookDto {
  @IfPresent()
  @NonEmptyText(WEBHOOK_NAME_MAX_LENGTH)
  name?: string;

  @IfPresent()
  @NonEmptyText(WEBHOOK_URL_MAX_LENGTH)
  url?: string;

  @IfPresent()
  @Secret()
  secret?: string;

  /** null switches the subscription to every event type. */
  @IfPresentAndNotNull()
  @EventTypes('event_types must not be empty; send null to receive every event type')
  event_types?: string[] | null;

  /** null removes the filter. */
  @IfPresentAndNotNull()
  @IsObject({ message: 'filter must be an object (or null to remove it)' })
  filter?: Record<string, unknown> | null;

  @IfPresent()
  @IsOneOf(WEBHOOK_STATUSES)
  status?: WebhookStatus;

  /** Replaces the whole metadata object; {} clears it. */
  @IfPresent()
  @IsMetadata()
  metadata?: Record<string, unknown>;
}

export class ListWebhooksQuery extends PageQuery {
  @IsOptional()
  @IsOneOf(WEBHOOK_STATUSES)
  status?: WebhookStatus;
}

export class ListDeliveriesQuery extends PageQuery {
  @IsOptional()
  @IsOneOf(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class ReplayWebhookDto {
  @IsDefined({ message: 'event_id is required' })
  @IsIdOf('evt', 'event_id')
  event_id!: string;
}
