import { columnValues, DomainError, findByIds, findByIdsAt, IdPrefix, insertRows, isId, newId } from '@crm/common';
import { CreateDealDto, DealView, event, EventDraft, EventType, FullDealView, RequestContext, UpdateDealDto } from '@crm/contracts';
import { BatchRecording, BuiltInCustomFieldsService, RecordBatchWriter, RecordTable, Resolved } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { DealContacts } from '../deal-contacts/deal-contacts';
import { ContactsDirectory } from './contacts-directory';
import { dealChanges, dealUpdatedChange, recordedFields } from './deal-changes';
import { actorOf, SERVICE_USER_ID, statusAfterEntering, statusEvent } from './deal-stage-mover';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';
import { DEAL_FIELDS, dealCreatedData, newDeal } from './deal-rows';
import { DealViews } from './deal-views';
import { StageHistory } from './stage-history.entity';

/**
 * Deals as the record engine writes them (POST, PATCH and DELETE /deals are each a batch of one, and
 * imports hand their rows to the same writer). What differs from any record is here: a deal is placed in
 * a stage of its pipeline (read once for the batch, with the clock, which dates deals by the statement),
 * a stage move sets the status and records stage history, closing a deal adds deal.won or deal.lost, and
 * the primary contact follows contact_id. Its contact, company and owner are asked of the contacts
 * service in one request. A deal whose value follows its line items (docs/products.md) is sent no value,
 * and turning that on sets its value to their sum. Deals have no unique field to upsert on.
 */
export function dealsTable(dealContacts: DealContacts, views: DealViews): RecordTable<Deal, CreateDealDto, UpdateDealDto, FullDealView, DealView, Placement> {
  return {
    entity: Deal,
    table: 'deals',
    noun: 'deal',
    prefix: IdPrefix.Deal,
    object: 'deals',
    createBody: CreateDealDto,
    updateBody: UpdateDealDto,
    fields: DEAL_FIELDS,
    references: [
      { field: 'contact_id', table: 'contacts', noun: 'contact' },
      { field: 'company_id', table: 'companies', noun: 'company' },
      { field: 'owner_id', table: 'users', noun: 'user' },
    ],
    // A link that names nothing is answered before an unknown deal, as it is checked before the deal is read.
    referencesBeforeRows: true,
    clock: 'clock_timestamp()',
    resolve: async (m, items) => {
      const typed = items.map(({ index, body, row }) => ({ index, body: body as CreateDealDto | UpdateDealDto, row }));
      const placed = await stagesOf(
        m,
        typed
          // A create is always placed; an update only when it names a stage or moves to another pipeline.
          .filter(({ body, row }) => !row || body.stage_id !== undefined || (body.pipeline_id !== undefined && body.pipeline_id !== row.pipelineId))
          .map(({ index, body, row }) => ({ index, pipelineId: body.pipeline_id ?? row!.pipelineId, stageId: body.stage_id })),
      );
      return { byItem: await withLineTotals(m, typed, placed.byItem), now: placed.now };
    },
    newRow: (dto, now, placement) => newDeal('', dto, placement!.stage!, {}, now),
    derived: (before, set, now, body, placement) => {
      const deal = { ...before, ...set };
      const moved = placement?.stage && placement.stage.id !== before.stageId ? placement.stage : undefined;
      const total = placement?.lineTotal === undefined ? {} : { value: placement.lineTotal };
      if (moved) {
        const status = body.status ?? statusAfterEntering(moved, before.status);
        return {
          pipelineId: moved.pipelineId,
          stageId: moved.id,
          stageEnteredAt: now,
          status,
          lossReason: status === 'lost' ? deal.lossReason : null,
          ...total,
        };
      }
      return { ...(body.status !== undefined && body.status !== before.status ? { status: body.status } : {}), ...total };
    },
    changesOf: dealChanges,
    // `record`: the deal as a query answers it, so a copy kept from an export can take it whole (docs/exports.md).
    created: (deal) => event(EventType.DealCreated, { ...dealCreatedData(deal), record: presentDeal(deal) }),
    updated: (deal, changes, before) => {
      const events: EventDraft[] = [];
      if (deal.stageId !== before.stageId) {
        events.push(event(EventType.DealStageChanged, { deal_id: deal.id, from_stage_id: before.stageId, to_stage_id: deal.stageId }));
      }
      const closed = statusEvent(deal, before.status);
      if (closed) events.push(closed);
      return [...events, event(EventType.DealUpdated, { deal_id: deal.id, ...changes, record: presentDeal(deal) })];
    },
    deleted: (deal) => event(EventType.DealDeleted, { deal_id: deal.id }),
    changeView: recordedFields,
    updatedEntry: (deal, changes) => dealUpdatedChange(deal.id, changes),
    presentCreated: async (_m, rows) => rows.map((deal) => presentDeal(deal, deal.createdAt)),
    presentUpdated: async (m, rows, ctx) => {
      const full = await views.full(m, ctx, rows);
      return rows.map((deal) => full.get(deal.id)!);
    },
    afterWrite: (m, written, ctx) => afterDealWrites(m, ctx, dealContacts, written),
    beforeRemove: async (m, rows) =>
      dealContacts.byOwner(
        await dealContacts.removeForOwners(
          m,
          rows.map((r) => r.id),
        ),
      ),
  };
}

/**
 * After deals are placed or moved: their stage history (one insert), the primary contact association
 * following contact_id, and for a new deal created closed its deal.won or deal.lost after its own events.
 */
async function afterDealWrites(
  m: EntityManager,
  ctx: RequestContext,
  dealContacts: DealContacts,
  written: Array<{ before: Deal | null; after: Deal }>,
): Promise<Map<string, BatchRecording>> {
  const moves = written.filter(({ before, after }) => !before || before.stageId !== after.stageId);
  const actor = actorOf(ctx);
  await insertRows(
    m,
    StageHistory,
    moves.map(({ before, after }) =>
      columnValues(
        m,
        StageHistory,
        {
          id: newId(IdPrefix.StageHistory),
          dealId: after.id,
          fromStageId: before ? before.stageId : null,
          toStageId: after.stageId,
          changedAt: after.stageEnteredAt,
          changedBy: actor.userId ?? SERVICE_USER_ID,
          changedByKeyId: actor.keyId,
        },
        ['id', 'dealId', 'fromStageId', 'toStageId', 'changedAt', 'changedBy', 'changedByKeyId'],
      ),
    ),
  );
  const recordings = dealContacts.byOwner(
    await dealContacts.followPrimary(
      m,
      written.map(({ before, after }) => ({ owner: after.id, from: before ? before.contactId : null, to: after.contactId })),
    ),
  );
  for (const { before, after } of written) {
    const closed = before ? undefined : statusEvent(after, null);
    if (!closed) continue;
    const recording = recordings.get(after.id) ?? { events: [], changes: [] };
    recordings.set(after.id, { events: [...recording.events, closed], changes: recording.changes });
  }
  return recordings;
}

/** What a deal write reads besides its row: its stage when it is placed, its lines' sum when its value starts following them. */
export interface Placement {
  stage?: Stage;
  lineTotal?: number;
}

/**
 * Each item's stage as placed, with the 400 of a value sent to a deal whose value follows its line items,
 * and the lines' sum (one query) of each deal that turns value_from_line_items on.
 */
async function withLineTotals(
  m: EntityManager,
  items: Array<{ index: number; body: CreateDealDto | UpdateDealDto; row: Deal | null }>,
  stages: Map<number, Stage | DomainError>,
): Promise<Map<number, Placement | DomainError>> {
  const result = new Map<number, Placement | DomainError>();
  for (const [index, stage] of stages) result.set(index, stage instanceof DomainError ? stage : { stage });
  const turningOn: Array<{ index: number; dealId: string }> = [];
  for (const { index, body, row } of items) {
    if (result.get(index) instanceof DomainError) continue;
    const follows = body.value_from_line_items ?? row?.valueFromLineItems ?? false;
    if (follows && body.value !== undefined) {
      result.set(index, DomainError.invalid('value', 'value is the sum of the line items while value_from_line_items is true; leave it out.', 'computed'));
    } else if (row && body.value_from_line_items === true && !row.valueFromLineItems) turningOn.push({ index, dealId: row.id });
  }
  if (!turningOn.length) return result;
  const totals: Array<{ deal_id: string; total: string }> = await m.query(
    `SELECT deal_id, sum(amount)::text AS total FROM line_items WHERE deal_id = ANY($1::text[]) GROUP BY deal_id`,
    [turningOn.map((t) => t.dealId)],
  );
  const totalOf = new Map(totals.map((t) => [t.deal_id, Number(t.total)]));
  for (const { index, dealId } of turningOn) result.set(index, { ...(result.get(index) as Placement | undefined), lineTotal: totalOf.get(dealId) ?? 0 });
  return result;
}

/**
 * Each item's stage (the one stage check of every deal write), or the 400 naming what is wrong; and the
 * clock read with the stages, in the same round trip, when there was one to read.
 */
async function stagesOf(m: EntityManager, items: Array<{ index: number; pipelineId: string; stageId: string | undefined }>): Promise<Resolved<Stage>> {
  const result = new Map<number, Stage | DomainError>();
  if (!items.length) return { byItem: result };
  const stageIds = items.map((i) => i.stageId).filter((id): id is string => id !== undefined && isId(id, IdPrefix.Stage));
  const read = await findByIdsAt(m, Stage, [...new Set(stageIds)], 'clock_timestamp()');
  const stageById = new Map(read.rows.map((s) => [s.id, s]));
  // A stage of the named pipeline proves the pipeline exists; only otherwise is the pipeline looked up, to name the right field.
  const stageOf = (i: { pipelineId: string; stageId: string | undefined }) => (i.stageId === undefined ? undefined : stageById.get(i.stageId));
  const unproven = items.filter((i) => i.stageId !== undefined && stageOf(i)?.pipelineId !== i.pipelineId && isId(i.pipelineId, IdPrefix.Pipeline));
  const pipelineExists = new Set((await findByIds(m, Pipeline, [...new Set(unproven.map((i) => i.pipelineId))])).map((p) => p.id));
  for (const item of items) {
    const { index, pipelineId, stageId } = item;
    const stage = stageOf(item);
    if (stageId === undefined) result.set(index, DomainError.invalid('stage_id', 'stage_id is required when pipeline_id changes.', 'required'));
    else if (stage && stage.pipelineId === pipelineId) result.set(index, stage);
    else if (!pipelineExists.has(pipelineId)) result.set(index, DomainError.invalid('pipeline_id', `No pipeline with id '${pipelineId}'.`, 'not_found'));
    else result.set(index, DomainError.invalid('stage_id', `stage_id must be a stage of pipeline '${pipelineId}'.`));
  }
  return { byItem: result, now: read.now };
}

/** Every write of deals, through the record engine with the deals' hooks above. */
@Injectable()
export class DealsBatchWriter extends RecordBatchWriter<Deal, CreateDealDto, UpdateDealDto, FullDealView, DealView, Placement> {
  constructor(directory: ContactsDirectory, customFields: BuiltInCustomFieldsService, dealContacts: DealContacts, views: DealViews) {
    super(dealsTable(dealContacts, views), customFields, directory);
  }
}
