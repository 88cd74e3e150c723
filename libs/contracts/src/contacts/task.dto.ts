import { IsDefined, IsOptional, IsRFC3339 } from 'class-validator';
import { ContactLink, DealLink, IfPresent, IsIdOf, IsOneOf, MetadataInput, NonEmptyText, OwnerLink, Text, Trim } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { CustomFieldsInput } from '../schema/field-values';
import { ContactsLimits, TASK_PRIORITIES, TASK_STATUSES, TaskPriority, TaskStatus } from './values';

class TaskFieldsDto {
  @IsOptional()
  @Text(ContactsLimits.body)
  description?: string | null;

  @IsOptional()
  @IsRFC3339({ message: 'due_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  due_at?: string | null;

  @ContactLink()
  contact_id?: string | null;

  @DealLink()
  deal_id?: string | null;

  @OwnerLink()
  owner_id?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on tasks (POST /objects/tasks/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateTaskDto extends TaskFieldsDto {
  @IsDefined({ message: 'title is required' })
  @Trim()
  @NonEmptyText(ContactsLimits.taskTitle)
  title!: string;

  @IsOptional()
  @IsOneOf(TASK_PRIORITIES)
  priority?: TaskPriority;

  @IsOptional()
  @IsOneOf(TASK_STATUSES)
  status?: TaskStatus;
}

export class UpdateTaskDto extends TaskFieldsDto {
  @IfPresent()
  @Trim()
  @NonEmptyText(ContactsLimits.taskTitle)
  title?: string;

  @IfPresent()
  @IsOneOf(TASK_PRIORITIES)
  priority?: TaskPriority;

  @IfPresent()
  @IsOneOf(TASK_STATUSES)
  status?: TaskStatus;
}

export class ListTasksQuery extends SortablePageQuery {
  @IsOptional()
  @IsOneOf(TASK_STATUSES)
  status?: TaskStatus;

  @IsOptional()
  @IsOneOf(TASK_PRIORITIES)
  priority?: TaskPriority;

  @IsOptional()
  @IsIdOf('cont', 'contact_id')
  contact_id?: string;

  @IsOptional()
  @IsIdOf('deal', 'deal_id')
  deal_id?: string;

  @IsOptional()
  @IsIdOf('user', 'owner_id')
  owner_id?: string;
}
