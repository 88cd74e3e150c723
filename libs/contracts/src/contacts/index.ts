import type { RelatedSummary } from '../related';

/** Body of ContactsInternalRpc.Resolve. Unknown ids are simply absent from the reply. */
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
export interface ActivityEventData {
  activity_id: string;
  type: string;
  contact_id: string | null;
  deal_id: string | null;
  occurred_at: string;
  /** activity.updated only: the fields the update changed. */
  changed?: string[];
}

/** Data of contact.deleted; deals unlink the contact when they see it. */
export interface ContactDeletedData {
  contact_id: string;
  /** Set when the contact was removed by a merge: its deals already belong to this contact. */
  merged_into?: string;
}

export interface CompanyDeletedData {
  company_id: string;
}

export * from './activity.dto';
export * from './company.dto';
export * from './contact.dto';
export * from './task.dto';
export * from './user.dto';
export * from './values';
export * from './views';
export * from './capture.dto';
