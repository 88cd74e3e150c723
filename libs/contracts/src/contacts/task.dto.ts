import { PageQuery } from '@crm/common';
import { IsDefined, IsIn, IsOptional, IsRFC3339, IsString, Length, MaxLength } from 'class-validator';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { IfPresent, IsIdOf, Trim } from '../dto-helpers';
import { IsMetadata } from '@crm/common';
import { ContactsLimits, TASK_PRIORITIES, TASK_STATUSES, TaskPriority, TaskStatus } from './values';

const PRIORITY_MESSAGE = `priority must be one of ${TASK_PRIORITIES.join(', ')}`;
const STATUS_MESSAGE = `status must be one of ${TASK_STATUSES.join(', ')}`;
const TITLE_MESSAGE = `title must be 1 to ${ContactsLimits.taskTitle} characters`;

class TaskFieldsDto {
  @IsOptional()
  @IsString({ message: 'description must be a string' })
  @MaxLength(ContactsLimits.body, { message: `description must be at most ${ContactsLimits.body} characters` })
  description?: string | null;

  @IsOptional()
  @IsRFC3339({ message: 'due_at must be an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' })
  due_at?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'contacts' })
  @IsIdOf('cont', 'contact_id')
  contact_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'deals' })
  @IsIdOf('deal', 'deal_id')
  deal_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'users' })
  @IsIdOf('user', 'owner_id')
  owner_id?: string | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on tasks (POST /objects/tasks/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateTaskDto extends TaskFieldsDto {
  @IsDefined({ message: 'title is required' })
  @Trim()
  @IsString({ message: 'title must be a string' })
  @Length(1, ContactsLimits.taskTitle, { message: TITLE_MESSAGE })
  title!: string;

  @IsOptional()
  @IsIn(TASK_PRIORITIES, { message: PRIORITY_MESSAGE })
  priority?: TaskPriority;

  @IsOptional()
  @IsIn(TASK_STATUSES, { message: STATUS_MESSAGE })
  status?: TaskStatus;
}

export class UpdateTaskDto extends TaskFieldsDto {
  @IfPresent()
  @Trim()
  @IsString({ message: 'title must be a string' })
  @Length(1, ContactsLimits.taskTitle, { message: TITLE_MESSAGE })
  title?: string;

  @IfPresent()
  @IsIn(TASK_PRIORITIES, { message: PRIORITY_MESSAGE })
  priority?: TaskPriority;

  @IfPresent()
  @IsIn(TASK_STATUSES, { message: STATUS_MESSAGE })
  status?: TaskStatus;
}

export class ListTasksQuery extends PageQuery {
  @IsOptional()
  @IsIn(TASK_STATUSES, { message: STATUS_MESSAGE })
  status?: TaskStatus;

  @IsOptional()
  @IsIn(TASK_PRIORITIES, { message: PRIORITY_MESSAGE })
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
