import { ApiProperty } from '@nestjs/swagger';
import { WithUpdateChanges } from '../changes/update-changes';
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
class ActivityEventFields {
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
}

export class ActivityEventData extends WithUpdateChanges(ActivityEventFields) {}

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
