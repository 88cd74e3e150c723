import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WithUpdateChanges } from '../changes/update-changes';
import { RelatedSummary } from '../related';
import { CONTACT_SOURCES, CONTACT_STAGES } from './values';

/** The contact subset returned by create and list. */
export class ContactSummaryView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  email!: string;
  @ApiProperty({ type: String, nullable: true })
  first_name!: string | null;
  @ApiProperty({ type: String, nullable: true })
  last_name!: string | null;
  @ApiProperty({ enum: CONTACT_STAGES, nullable: true })
  stage!: string | null;
  @ApiProperty({ enum: CONTACT_SOURCES, nullable: true })
  source!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class ContactRelationships {
  @ApiProperty({ type: () => RelatedSummary, nullable: true })
  company!: RelatedSummary | null;
  @ApiProperty({ type: () => RelatedSummary, nullable: true })
  owner!: RelatedSummary | null;
}

/** The full contact returned by get, update and merge. */
export class ContactView extends ContactSummaryView {
  @ApiProperty({ type: String, nullable: true })
  phone!: string | null;
  @ApiProperty({ type: String, nullable: true })
  title!: string | null;
  @ApiProperty({ type: String, nullable: true })
  source_detail!: string | null;
  @ApiProperty({ type: String, nullable: true })
  company_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  owner_id!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  icp_score!: number | null;
  @ApiProperty({ type: String, nullable: true })
  icp_score_reason!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  icp_scored_at!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on contacts. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
  @ApiProperty({ type: () => ContactRelationships })
  relationships!: ContactRelationships;
}

export class CompanyView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String, nullable: true })
  domain!: string | null;
  @ApiProperty({ type: String, nullable: true })
  industry!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on companies. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** Activity summary as listed under a contact or a deal. */
export class ActivitySummaryView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  type!: string;
  @ApiProperty({ type: String })
  status!: string;
  @ApiProperty({ type: String, nullable: true })
  subject!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  occurred_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class ActivityView extends ActivitySummaryView {
  @ApiProperty({ type: String, nullable: true })
  body!: string | null;
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  deal_id!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on activities. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
}

/** Task summary as listed under a contact or a deal. */
export class TaskSummaryView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  title!: string;
  @ApiProperty({ type: String })
  priority!: string;
  @ApiProperty({ type: String })
  status!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  due_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class TaskView extends TaskSummaryView {
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  completed_at!: string | null;
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  deal_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  owner_id!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on tasks. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
}

/** Which fields an update changed, with their values before and after: contact, company, deal and pipeline updates carry it. */
export class FieldChanges {
  @ApiProperty({ type: [String] })
  changed!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true })
  previous!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true })
  current!: Record<string, unknown>;
  @ApiPropertyOptional({ type: Number, description: "On contact.updated and deal.updated: the record's version after this change (docs/exports.md)." })
  version?: number;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'On contact.updated and deal.updated: the record after the change, as a query answers it without fields.',
  })
  record?: object;
}

export class ContactUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  contact_id!: string;
}

export class CompanyCreatedData {
  @ApiProperty({ type: String })
  company_id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String, nullable: true })
  domain!: string | null;
}

export class CompanyUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  company_id!: string;
}

/** Data of task.created / task.updated / task.deleted. */
class TaskEventFields {
  @ApiProperty({ type: String })
  task_id!: string;
  @ApiProperty({ type: String })
  status!: string;
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  deal_id!: string | null;
}

export class TaskEventData extends WithUpdateChanges(TaskEventFields) {}
