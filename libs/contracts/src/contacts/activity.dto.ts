import { PageQuery } from '@crm/common';
import { IsDefined, IsIn, IsOptional, IsRFC3339, IsString, MaxLength } from 'class-validator';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { IfPresent, IsIdOf } from '../dto-helpers';
import { IsMetadata } from '@crm/common';
import { ACTIVITY_STATUSES, ACTIVITY_TYPES, ActivityStatus, ActivityType, ContactsLimits } from './values';

const TYPE_MESSAGE = `type must be one of ${ACTIVITY_TYPES.join(', ')}`;
const STATUS_MESSAGE = `status must be one of ${ACTIVITY_STATUSES.join(', ')}`;
const OCCURRED_MESSAGE = 'occurred_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z';

class ActivityFieldsDto {
  @IsOptional()
  @IsString({ message: 'subject must be a string' })
  @MaxLength(ContactsLimits.subject, { message: `subject must be at most ${ContactsLimits.subject} characters` })
  subject?: string | null;

  @IsOptional()
  @IsString({ message: 'body must be a string' })
  @MaxLength(ContactsLimits.body, { message: `body must be at most ${ContactsLimits.body} characters` })
  body?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'contacts' })
  @IsIdOf('cont', 'contact_id')
  contact_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'deals' })
  @IsIdOf('deal', 'deal_id')
  deal_id?: string | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on activities (POST /objects/activities/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateActivityDto extends ActivityFieldsDto {
  @IsDefined({ message: 'type is required' })
  @IsIn(ACTIVITY_TYPES, { message: TYPE_MESSAGE })
  type!: ActivityType;

  @IsOptional()
  @IsIn(ACTIVITY_STATUSES, { message: STATUS_MESSAGE })
  status?: ActivityStatus;

  @IsOptional()
  @IsRFC3339({ message: OCCURRED_MESSAGE })
  occurred_at?: string;
}

export class UpdateActivityDto extends ActivityFieldsDto {
  @IfPresent()
  @IsIn(ACTIVITY_TYPES, { message: TYPE_MESSAGE })
  type?: ActivityType;

  @IfPresent()
  @IsIn(ACTIVITY_STATUSES, { message: STATUS_MESSAGE })
  status?: ActivityStatus;

  @IfPresent()
  @IsRFC3339({ message: OCCURRED_MESSAGE })
  occurred_at?: string;
}

export class ListActivitiesQuery extends PageQuery {
  @IsOptional()
  @IsIn(ACTIVITY_TYPES, { message: TYPE_MESSAGE })
  type?: ActivityType;

  @IsOptional()
  @IsIn(ACTIVITY_STATUSES, { message: STATUS_MESSAGE })
  status?: ActivityStatus;

  @IsOptional()
  @IsIdOf('cont', 'contact_id')
  contact_id?: string;

  @IsOptional()
  @IsIdOf('deal', 'deal_id')
  deal_id?: string;
}
