import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RelatedSummary } from '../related';

/** Body of Ops.contactsInternal.resolve. Unknown ids are simply absent from the reply. */
export interface ResolveContactsRequest {
  contact_ids?: string[];
  company_ids?: string[];
  user_ids?: string[];
}

export interface ResolveContactsReply {
  contacts: RelatedSummary[];
  companies: RelatedSummary[];
  /** Team members (`user_` ids), named by their name. */
  users?: RelatedSummary[];
}

/** Data of activity.created / activity.updated / activity.deleted. Deals use it for last_activity_at. */
export class ActivityEventData {
  @ApiProperty({ type: String })
  activity_id!: string;
  @ApiProperty({ type: String })
  type!: string;
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  deal_id!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  occurred_at!: string;
  /** activity.updated only: the fields the update changed. */
  @ApiProperty({ type: [String], required: false })
  changed?: string[];
  /** activity.updated only: each changed field's value before the update, by field name. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  previous?: Record<string, unknown>;
  /** activity.updated only: each changed field's value after the update, by field name. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  current?: Record<string, unknown>;
}

/** Data of contact.deleted; deals unlink the contact when they see it. */
export class ContactDeletedData {
  @ApiProperty({ type: String })
  contact_id!: string;
  /** Set when the contact was removed by a merge: its deals already belong to this contact. */
  @ApiProperty({ type: String, required: false })
  merged_into?: string;
}

export class CompanyDeletedData {
  @ApiProperty({ type: String })
  company_id!: string;
}

export * from './activity.dto';
export * from './company.dto';
export * from './contact.dto';
export * from './task.dto';
export * from './user.dto';
export * from './values';
export * from './views';
export * from './capture.dto';
