import { PickType } from '@nestjs/swagger';
import { RelatedSummary } from '../related';
import { DealView } from './deal.dto';

/** The deal subset GET /contacts/:id/deals lists. */
export class DealSummary extends PickType(DealView, ['id', 'name', 'pipeline_id', 'stage_id', 'value', 'currency', 'status', 'created_at', 'updated_at'] as const) {}

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
