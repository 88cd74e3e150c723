import type { DealSummary, DealView, StageHistoryView } from '@crm/contracts';
import { Deal } from './deal.entity';
import { StageHistory } from './stage-history.entity';

const DAY_MS = 86_400_000;

/** Whole days elapsed (complete 24-hour periods, so independent of any time zone); never negative. */
export function wholeDaysSince(start: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - start.getTime()) / DAY_MS));
}

export function presentDeal(deal: Deal, now = new Date()): DealView {
  return {
    id: deal.id,
    name: deal.name,
    pipeline_id: deal.pipelineId,
    stage_id: deal.stageId,
    contact_id: deal.contactId,
    company_id: deal.companyId,
    value: deal.value,
    currency: deal.currency,
    value_from_line_items: deal.valueFromLineItems ?? false,
    status: deal.status,
    expected_close: deal.expectedClose?.toISOString() ?? null,
    owner_id: deal.ownerId,
    source: deal.source,
    metadata: deal.metadata,
    custom_fields: deal.customFields ?? {},
    loss_reason: deal.lossReason,
    stage_entered_at: deal.stageEnteredAt.toISOString(),
    last_activity_at: deal.lastActivityAt?.toISOString() ?? null,
    days_in_stage: wholeDaysSince(deal.stageEnteredAt, now),
    deal_age_days: wholeDaysSince(deal.createdAt, now),
    created_at: deal.createdAt.toISOString(),
    updated_at: deal.updatedAt.toISOString(),
  };
}

export function presentDealSummary(deal: Deal): DealSummary {
  return {
    id: deal.id,
    name: deal.name,
    pipeline_id: deal.pipelineId,
    stage_id: deal.stageId,
    value: deal.value,
    currency: deal.currency,
    status: deal.status,
    created_at: deal.createdAt.toISOString(),
    updated_at: deal.updatedAt.toISOString(),
  };
}

export function presentHistory(record: StageHistory): StageHistoryView {
  return {
    id: record.id,
    deal_id: record.dealId,
    from_stage_id: record.fromStageId,
    to_stage_id: record.toStageId,
    changed_at: record.changedAt.toISOString(),
    changed_by: record.changedBy,
    changed_by_key_id: record.changedByKeyId,
  };
}
