import { fieldSpecs } from '@crm/common';
import { CreateDealDto, DealCreatedData } from '@crm/contracts';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';

/** Fields a PATCH may change other than the stage and status, with their column properties. */
export const DEAL_FIELDS = fieldSpecs<Deal>({
  name: 'value',
  contact_id: 'value',
  company_id: 'value',
  value: 'value',
  currency: 'value',
  value_from_line_items: 'value',
  owner_id: 'value',
  source: 'value',
  loss_reason: 'value',
  expected_close: 'date',
  metadata: 'json',
  custom_fields: 'json',
});

/** A new deal in `stage`, as POST /deals and a batch create write it; `now` is its creation and stage entry. */
export function newDeal(id: string, dto: CreateDealDto, stage: Stage, customFields: Record<string, unknown>, now: Date): Deal {
  return {
    id,
    name: dto.name,
    pipelineId: stage.pipelineId,
    stageId: stage.id,
    contactId: dto.contact_id ?? null,
    companyId: dto.company_id ?? null,
    value: dto.value ?? 0,
    currency: dto.currency ?? 'USD',
    valueFromLineItems: dto.value_from_line_items ?? false,
    // A deal created straight into a closed stage is closed; an explicit status has the last word.
    status: dto.status ?? (stage.type === 'won' ? 'won' : stage.type === 'lost' ? 'lost' : 'open'),
    expectedClose: dto.expected_close ? new Date(dto.expected_close) : null,
    ownerId: dto.owner_id ?? null,
    source: dto.source ?? null,
    metadata: dto.metadata ?? {},
    customFields,
    lossReason: null,
    stageEnteredAt: now,
    lastActivityAt: null,
    staleNotifiedAt: null,
    closedAt: null,
    createdAt: now,
    updatedAt: now,
    // The outbox step that records deal.created gives it its first version (docs/exports.md).
    version: '0',
  };
}

/** deal.created's payload: the deal's fields as its view shows them. */
export function dealCreatedData(deal: Deal): DealCreatedData {
  const { id, name, pipeline_id, stage_id, contact_id, company_id, value, currency, status } = presentDeal(deal);
  return { deal_id: id, name, pipeline_id, stage_id, contact_id, company_id, value, currency, status };
}

/** The columns an update writes: every field a PATCH may change, and the placement a stage move changes. */
export const DEAL_UPDATE_COLUMNS: Array<keyof Deal & string> = [
  'id',
  'name',
  'contactId',
  'companyId',
  'value',
  'currency',
  'valueFromLineItems',
  'ownerId',
  'source',
  'lossReason',
  'expectedClose',
  'metadata',
  'customFields',
  'status',
  'pipelineId',
  'stageId',
  'stageEnteredAt',
  'updatedAt',
];
