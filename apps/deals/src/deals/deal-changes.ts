import { ChangeSet, viewChanges } from '@crm/common';
import { DealView } from '@crm/contracts';
import { ChangeDraft, updatedChange } from '@crm/messaging';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';

/** The fields of a deal a write can change, in the order deal.updated reports them. */
const CHANGEABLE = [
  'name',
  'contact_id',
  'company_id',
  'value',
  'currency',
  'value_from_line_items',
  'owner_id',
  'source',
  'loss_reason',
  'expected_close',
  'metadata',
  'custom_fields',
  'stage_id',
  'stage_entered_at',
  'pipeline_id',
  'status',
] as const satisfies ReadonlyArray<keyof DealView>;

/**
 * Left out of change entries: the stage clock is always the instant of the move (the entry's occurred_at),
 * and the day counts and last activity are derived or follow activities, not writes to the deal.
 */
const NOT_RECORDED = new Set<string>(['stage_entered_at', 'last_activity_at', 'days_in_stage', 'deal_age_days']);

/** What changed between two states of a deal, with values as the API shows them: the body of deal.updated. */
export function dealChanges(before: Deal, after: Deal): ChangeSet {
  return viewChanges(presentDeal(before), presentDeal(after), CHANGEABLE);
}

/** The fields a creation's or deletion's history entry keeps. */
export function recordedFields(deal: Deal): Record<string, unknown> {
  return Object.fromEntries(Object.entries(presentDeal(deal)).filter(([field]) => !NOT_RECORDED.has(field)));
}

/** Null when nothing a history shows changed. */
export function dealUpdatedChange(dealId: string, changes: ChangeSet): ChangeDraft | null {
  return updatedChange('deals', dealId, { ...changes, changed: changes.changed.filter((field) => !NOT_RECORDED.has(field)) });
}
