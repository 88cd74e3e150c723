import { PageQuery } from '@crm/common';
import { IsIdOf } from '../dto-helpers';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsDefined, IsIn, IsOptional, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import { EVENT_TYPES } from '../events';
import { IsMetadata } from '@crm/common';

export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const DELIVERY_STATUSES = ['success', 'failed', 'pending'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WEBHOOK_NAME_MAX_LENGTH = 200;
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_EVENT_TYPES_MAX = 100;
/** Standard Webhooks: `whsec_` followed by the base64 of a 24 to 64 byte key. */
export const SIGNING_SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;
/** Optional, but when present it must be valid: `null` is not a way to clear a required field. */
const IsAbsentOrValid = () => ValidateIf((_, value) => value !== undefined);

const SECRET_MESSAGE = 'secret must be whsec_ followed by the base64 of 24 to 64 random bytes';

export class CreateWebhookDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Length(1, WEBHOOK_NAME_MAX_LENGTH, { message: `name must be 1 to ${WEBHOOK_NAME_MAX_LENGTH} characters` })
  name!: string;

  @IsDefined({ message: 'url is required' })
  @IsString({ message: 'url must be a string' })
  @Length(1, WEBHOOK_URL_MAX_LENGTH, { message: `url must be 1 to ${WEBHOOK_URL_MAX_LENGTH} characters` })
  url!: string;

  @IsAbsentOrValid()
  @IsString({ message: SECRET_MESSAGE })
  @Matches(SIGNING_SECRET_SHAPE, { message: SECRET_MESSAGE })
  secret?: string;

  /** Omitted or null: every event type. */
  @IsOptional()
  @IsArray({ message: 'event_types must be an array of event types' })
  @ArrayMinSize(1, { message: 'event_types must not be empty; omit it (or send null) to receive every event type' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES_MAX, { message: `event_types may list at most ${WEBHOOK_EVENT_TYPES_MAX} types` })
  @ArrayUnique({ message: 'event_types must not repeat a type' })
  @IsIn(EVENT_TYPES, { each: true, message: 'event_types may only contain known event types (see GET /events)' })
  event_types?: string[] | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown>;
}

export class UpdateWebhookDto {
  @IsAbsentOrValid()
  @IsString({ message: 'name must be a string' })
  @Length(1, WEBHOOK_NAME_MAX_LENGTH, { message: `name must be 1 to ${WEBHOOK_NAME_MAX_LENGTH} characters` })
  name?: string;

  @IsAbsentOrValid()
  @IsString({ message: 'url must be a string' })
  @Length(1, WEBHOOK_URL_MAX_LENGTH, { message: `url must be 1 to ${WEBHOOK_URL_MAX_LENGTH} characters` })
  url?: string;

  @IsAbsentOrValid()
  @IsString({ message: SECRET_MESSAGE })
  @Matches(SIGNING_SECRET_SHAPE, { message: SECRET_MESSAGE })
  secret?: string;

  /** null switches the subscription to every event type. */
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsArray({ message: 'event_types must be an array of event types' })
  @ArrayMinSize(1, { message: 'event_types must not be empty; send null to receive every event type' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES_MAX, { message: `event_types may list at most ${WEBHOOK_EVENT_TYPES_MAX} types` })
  @ArrayUnique({ message: 'event_types must not repeat a type' })
  @IsIn(EVENT_TYPES, { each: true, message: 'event_types may only contain known event types (see GET /events)' })
  event_types?: string[] | null;

  @IsAbsentOrValid()
  @IsIn(WEBHOOK_STATUSES, { message: `status must be one of ${WEBHOOK_STATUSES.join(', ')}` })
  status?: WebhookStatus;

  /** Replaces the whole metadata object; {} clears it. */
  @IsAbsentOrValid()
  @IsMetadata()
  metadata?: Record<string, unknown>;
}

export class ListWebhooksQuery extends PageQuery {
  @IsOptional()
  @IsIn(WEBHOOK_STATUSES, { message: `status must be one of ${WEBHOOK_STATUSES.join(', ')}` })
  status?: WebhookStatus;
}

export class ListDeliveriesQuery extends PageQuery {
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class ReplayWebhookDto {
  @IsDefined({ message: 'event_id is required' })
  @IsIdOf('evt', 'event_id')
  event_id!: string;
}
