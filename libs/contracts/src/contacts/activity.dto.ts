import { IsDefined, IsOptional, IsRFC3339 } from 'class-validator';
import { ContactLink, DealLink, IfPresent, IsIdOf, IsOneOf, MetadataInput, Text } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { CustomFieldsInput } from '../schema/field-values';
import { ACTIVITY_STATUSES, ACTIVITY_TYPES, ActivityStatus, ActivityType, ContactsLimits } from './values';

const OCCURRED_MESSAGE = 'occurred_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z';

class ActivityFieldsDto {
  @IsOptional()
  @Text(ContactsLimits.subject)
  subject?: string | null;

  @IsOptional()
  @Text(ContactsLimits.body)
  body?: string | null;

  @ContactLink()
  contact_id?: string | null;

  @DealLink()
  deal_id?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on activities (POST /objects/activities/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateActivityDto extends ActivityFieldsDto {
  @IsDefined({ message: 'type is required' })
  @IsOneOf(ACTIVITY_TYPES)
  type!: ActivityType;

  @IsOptional()
  @IsOneOf(ACTIVITY_STATUSES)
  status?: ActivityStatus;

  @IsOptional()
  @IsRFC3339({ message: OCCURRED_MESSAGE })
  occurred_at?: string;
}

export class UpdateActivityDto extends ActivityFieldsDto {
  @IfPresent()
  @IsOneOf(ACTIVITY_TYPES)
  type?: ActivityType;

  @IfPresent()
  @IsOneOf(ACTIVITY_STATUSES)
  status?: ActivityStatus;

  @IfPresent()
  @IsRFC3339({ message: OCCURRED_MESSAGE })
  occurred_at?: string;
}

export class ListActivitiesQuery extends SortablePageQuery {
  @IsOptional()
  @IsOneOf(ACTIVITY_TYPES)
  type?: ActivityType;

  @IsOptional()
  @IsOneOf(ACTIVITY_STATUSES)
  status?: ActivityStatus;

  @IsOptional()
  @IsIdOf('cont', 'contact_id')
  contact_id?: string;

  @IsOptional()
  @IsIdOf('deal', 'deal_id')
  deal_id?: string;
}
