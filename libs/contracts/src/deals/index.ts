import type { RelatedSummary } from '../related';

/** The deal subset GET /contacts/:id/deals lists. */
export interface DealSummary {
  id: string;
  name: string;
  pipeline_id: string;
  stage_id: string;
  value: number;
  currency: string;
  status: string;
  created_at: string;
  updated_at: string;
}

/** Body of DealsInternalRpc.ListForContact; the reply is a Page<DealSummary>. */
export interface ListDealsForContactRequest {
  contact_id: string;
  cursor?: string;
  limit?: number;
}

/** Body of DealsInternalRpc.ReassignContact; idempotent, so a retried merge is safe. */
export interface ReassignContactRequest {
  from_contact_id: string;
  to_contact_id: string;
}

export interface ReassignContactReply {
  moved: number;
}

/** Body of DealsInternalRpc.Resolve. */
export interface ResolveDealsRequest {
  deal_ids: string[];
}

export interface ResolveDealsReply {
  deals: RelatedSummary[];
}

export * from './deal.dto';
export * from './events';
export * from './pipeline.dto';
export * from './validators';
