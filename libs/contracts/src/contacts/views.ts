import type { RelatedSummary } from '../related';

/** The contact subset returned by create and list. */
export interface ContactSummaryView {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  stage: string | null;
  source: string | null;
  created_at: string;
  updated_at: string;
}

/** The full contact returned by get, update and merge. */
export interface ContactView extends ContactSummaryView {
  phone: string | null;
  title: string | null;
  source_detail: string | null;
  company_id: string | null;
  owner_id: string | null;
  icp_score: number | null;
  icp_score_reason: string | null;
  icp_scored_at: string | null;
  metadata: Record<string, unknown>;
  /** Values of the custom fields defined on contacts. */
  custom_fields: Record<string, unknown>;
  relationships: { company: RelatedSummary | null; owner: RelatedSummary | null };
}

export interface CompanyView {
  id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  metadata: Record<string, unknown>;
  /** Values of the custom fields defined on companies. */
  custom_fields: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** Activity summary as listed under a contact or a deal. */
export interface ActivitySummaryView {
  id: string;
  type: string;
  status: string;
  subject: string | null;
  occurred_at: string;
  created_at: string;
  updated_at: string;
}

export interface ActivityView extends ActivitySummaryView {
  body: string | null;
  contact_id: string | null;
  deal_id: string | null;
  metadata: Record<string, unknown>;
}

/** Task summary as listed under a contact or a deal. */
export interface TaskSummaryView {
  id: string;
  title: string;
  priority: string;
  status: string;
  due_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TaskView extends TaskSummaryView {
  description: string | null;
  completed_at: string | null;
  contact_id: string | null;
  deal_id: string | null;
  owner_id: string | null;
  metadata: Record<string, unknown>;
}

/** Data of contact.updated and company.updated: which fields changed, with their values before and after. */
export interface FieldChanges {
  changed: string[];
  previous: Record<string, unknown>;
  current: Record<string, unknown>;
}

export interface ContactUpdatedData extends FieldChanges {
  contact_id: string;
}

export interface CompanyCreatedData {
  company_id: string;
  name: string;
  domain: string | null;
}

export interface CompanyUpdatedData extends FieldChanges {
  company_id: string;
}

/** Data of task.created / task.updated / task.deleted. */
export interface TaskEventData {
  task_id: string;
  status: string;
  contact_id: string | null;
  deal_id: string | null;
  /** task.updated only: the fields the update changed. */
  changed?: string[];
}
