import {
  ChangeSet,
  columnValues,
  diffFields,
  DomainError,
  ErrorCode,
  findByIds,
  findByIdsAt,
  IdPrefix,
  insertRows,
  isId,
  lockRows,
  lockRowsAt,
  newId,
  updateRows,
} from '@crm/common';
import { CreateDealDto, DealView, event, EventDraft, EventType, FullDealView, RequestContext, UpdateDealDto } from '@crm/contracts';
import { BatchWriter, BuiltInCustomFieldsService, CreateItem, DeleteItem, ItemOutcome, UpdateItem, UpsertKey } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { DealContacts } from '../deal-contacts/deal-contacts';
import { ContactsDirectory } from './contacts-directory';
import { dealChanges, dealCreatedChange, dealDeletedChange, dealUpdatedChange } from './deal-changes';
import { actorOf, SERVICE_USER_ID, statusAfterEntering, statusEvent } from './deal-stage-mover';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';
import { DEAL_FIELDS, DEAL_UPDATE_COLUMNS, dealCreatedData, newDeal } from './deal-rows';
import { DealViews } from './deal-views';
import { StageHistory } from './stage-history.entity';

type Links = { contact_id?: string | null; company_id?: string | null; owner_id?: string | null };

const LINKS = [
  { field: 'contact_id', reply: 'contacts', noun: 'contact' },
  { field: 'company_id', reply: 'companies', noun: 'company' },
  { field: 'owner_id', reply: 'users', noun: 'user' },
] as const;

/**
 * Every write of deals: POST, PATCH and DELETE /deals are each a batch of one through this writer, and
 * imports hand it their rows. Batch writes of deals with the rules of POST, PATCH and DELETE /deals, set-based: one request to the
 * contacts service for every contact, company and owner the items name, one read of the stages and
 * pipelines they name, one multi-row insert or update of deals and one of stage history. Events are
 * those of the single writes, per item in their order: deal.created or deal.stage_changed, then deal.won
 * or deal.lost when the write closed the deal, then deal.updated; so are the change entries, which the
 * runner records beside them. Deals have no unique field to upsert on.
 */
@Injectable()
export class DealsBatchWriter implements BatchWriter<CreateDealDto, UpdateDealDto, DealView | FullDealView> {
  readonly noun = 'deal';
  readonly createBody = CreateDealDto;
  readonly updateBody = UpdateDealDto;

  constructor(
    private readonly directory: ContactsDirectory,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly dealContacts: DealContacts,
    private readonly views: DealViews,
  ) {}

  async insert(m: EntityManager, ctx: RequestContext, items: CreateItem<CreateDealDto>[]): Promise<ItemOutcome<DealView>[]> {
    if (!items.length) return [];
    const outcomes = new Map<number, ItemOutcome<DealView>>();
    const missing = await this.missingLinks(
      ctx,
      items.map((i) => ({ index: i.index, links: i.body })),
    );
    const { byItem: stages, now: read } = await this.stages(
      m,
      items.map((i) => ({ index: i.index, pipelineId: i.body.pipeline_id, stageId: i.body.stage_id })),
    );
    const now = read ?? (await this.clock(m));
    const ids = items.map(() => newId(IdPrefix.Deal));
    const custom = await this.customFields.valuesOfMany(
      m,
      ctx,
      'deals',
      items.map((item, i) => ({ recordId: ids[i], sent: item.body.custom_fields })),
    );
    const deals: Array<{ index: number; deal: Deal; warnings: ItemOutcome<DealView>['warnings'] }> = [];
    items.forEach(({ index, body: dto }, i) => {
      const stage = stages.get(index)!;
      const error = missing.get(index) ?? (stage instanceof DomainError ? stage : undefined) ?? custom[i].error;
      if (error) return outcomes.set(index, { index, error });
      deals.push({
        index,
        deal: newDeal(ids[i], dto, stage as Stage, custom[i].stored ?? {}, now),
        warnings: custom[i].warnings,
      });
    });
    const props = deals.length ? Object.keys(deals[0].deal) : [];
    await insertRows(
      m,
      Deal,
      deals.map((d) => columnValues(m, Deal, d.deal, props)),
    );
    await this.history(
      m,
      ctx,
      deals.map((d) => ({ deal: d.deal, from: null })),
      now,
    );
    const contacts = this.dealContacts.byOwner(
      await this.dealContacts.followPrimary(
        m,
        deals.map((d) => ({ owner: d.deal.id, from: null, to: d.deal.contactId })),
      ),
    );
    for (const { index, deal, warnings } of deals) {
      const contact = contacts.get(deal.id);
      const closed = statusEvent(deal, null);
      outcomes.set(index, {
        index,
        status: 201,
        data: presentDeal(deal, now),
        warnings,
        // deal.won or deal.lost follows the deal's own events, as the closing of a deal already placed does.
        events: [event(EventType.DealCreated, dealCreatedData(deal)), ...(contact?.events ?? []), ...(closed ? [closed] : [])],
        changes: [dealCreatedChange(deal), ...(contact?.changes ?? [])],
      });
    }
    return items.map((item) => outcomes.get(item.index)!);
  }

  async update(m: EntityManager, ctx: RequestContext, items: UpdateItem<UpdateDealDto>[]): Promise<ItemOutcome<FullDealView>[]> {
    if (!items.length) return [];
    const outcomes = new Map<number, ItemOutcome<FullDealView>>();
    const missing = await this.missingLinks(
      ctx,
      items.map((i) => ({ index: i.index, links: i.body })),
    );
    if (items.some((i) => i.body.custom_fields !== undefined)) await this.customFields.lockDefinitions(m, 'deals');
    // The rows and the clock in one statement; without a row the clock is never used.
    const locked = await lockRowsAt(
      m,
      Deal,
      items.filter((i) => isId(i.id, IdPrefix.Deal)).map((i) => i.id),
      'clock_timestamp()',
    );
    const found = new Map(locked.rows.map((d) => [d.id, d]));
    const present = items.filter((item) => {
      // A link that names nothing is answered before an unknown deal, as it is checked before the deal is read.
      const error = missing.get(item.index) ?? (found.has(item.id) ? undefined : DomainError.notFound('deal', item.id));
      if (error) outcomes.set(item.index, { index: item.index, error });
      return !error;
    });
    const custom = await this.customFields.valuesOfMany(
      m,
      ctx,
      'deals',
      present.map((i) => ({ recordId: i.id, sent: i.body.custom_fields, existing: found.get(i.id)!.customFields ?? {} })),
    );
    // The stage each item moves to: a stage_id (with the pipeline it names or the deal's own), as PATCH /deals/:id reads it.
    const { byItem: targets } = await this.stages(
      m,
      present
        .filter((i) => i.body.stage_id !== undefined || (i.body.pipeline_id !== undefined && i.body.pipeline_id !== found.get(i.id)!.pipelineId))
        .map((i) => ({ index: i.index, pipelineId: i.body.pipeline_id ?? found.get(i.id)!.pipelineId, stageId: i.body.stage_id })),
    );
    const now = locked.now ?? new Date();

    const written: Array<{ index: number; deal: Deal; from: string | null; events: EventDraft[]; changes: ChangeSet }> = [];
    const unchanged: Array<{ index: number; deal: Deal }> = [];
    present.forEach((item, i) => {
      const target = targets.get(item.index);
      const error = custom[i].error ?? (target instanceof DomainError ? target : undefined);
      if (error) return outcomes.set(item.index, { index: item.index, error });
      const before = found.get(item.id)!;
      const deal: Deal = { ...before };
      const { set } = diffFields(deal, { ...item.body, custom_fields: custom[i].stored }, DEAL_FIELDS);
      Object.assign(deal, set);
      const events: EventDraft[] = [];
      const stage = target instanceof Stage && target.id !== before.stageId ? target : undefined;
      if (stage) {
        deal.pipelineId = stage.pipelineId;
        deal.stageId = stage.id;
        deal.stageEnteredAt = now;
        deal.status = item.body.status ?? statusAfterEntering(stage, before.status);
        deal.lossReason = deal.status === 'lost' ? deal.lossReason : null;
        events.push(event(EventType.DealStageChanged, { deal_id: deal.id, from_stage_id: before.stageId, to_stage_id: stage.id }));
      } else if (item.body.status !== undefined && item.body.status !== before.status) {
        deal.status = item.body.status;
      }
      const closed = statusEvent(deal, before.status);
      if (closed) events.push(closed);
      const changes = dealChanges(before, deal);
      if (!changes.changed.length) return unchanged.push({ index: item.index, deal: before });
      deal.updatedAt = now;
      events.push(event(EventType.DealUpdated, { deal_id: deal.id, ...changes }));
      written.push({ index: item.index, deal, from: stage ? before.stageId : null, events, changes });
    });

    await updateRows(
      m,
      Deal,
      written.map((w) => columnValues(m, Deal, w.deal, DEAL_UPDATE_COLUMNS)),
    );
    await this.history(
      m,
      ctx,
      written.filter((w) => w.from !== null).map((w) => ({ deal: w.deal, from: w.from })),
      now,
    );
    const contacts = this.dealContacts.byOwner(
      await this.dealContacts.followPrimary(
        m,
        written.map((w) => ({ owner: w.deal.id, from: found.get(w.deal.id)!.contactId, to: w.deal.contactId })),
      ),
    );
    const views = await this.views.full(
      m,
      ctx,
      [...written, ...unchanged].map((w) => w.deal),
      now,
      [...targets.values()].filter((t): t is Stage => t instanceof Stage),
    );
    for (const w of written) {
      const warnings = custom[present.findIndex((p) => p.index === w.index)].warnings;
      const contact = contacts.get(w.deal.id);
      outcomes.set(w.index, {
        index: w.index,
        status: 200,
        data: views.get(w.deal.id),
        warnings,
        events: [...w.events, ...(contact?.events ?? [])],
        changes: [dealUpdatedChange(w.deal.id, w.changes), ...(contact?.changes ?? [])],
      });
    }
    for (const u of unchanged) outcomes.set(u.index, { index: u.index, status: 200, data: views.get(u.deal.id) });
    return items.map((item) => outcomes.get(item.index)!);
  }

  async remove(m: EntityManager, _ctx: RequestContext, items: DeleteItem[]): Promise<ItemOutcome<DealView>[]> {
    if (!items.length) return [];
    // Read before the delete, for the last values their history keeps.
    const found = new Map(
      (
        await lockRows(
          m,
          Deal,
          items.filter((i) => isId(i.id, IdPrefix.Deal)).map((i) => i.id),
        )
      ).map((d) => [d.id, d]),
    );
    const contacts = this.dealContacts.byOwner(await this.dealContacts.removeForOwners(m, [...found.keys()]));
    if (found.size) await m.query(`DELETE FROM deals WHERE id = ANY($1::text[])`, [[...found.keys()]]);
    return items.map((item) => {
      const deal = found.get(item.id);
      if (!deal) return { index: item.index, error: DomainError.notFound('deal', item.id) };
      const contact = contacts.get(item.id);
      return {
        index: item.index,
        status: 204,
        events: [...(contact?.events ?? []), event(EventType.DealDeleted, { deal_id: item.id })],
        changes: [...(contact?.changes ?? []), dealDeletedChange(deal)],
      };
    });
  }

  async upsertKey(): Promise<UpsertKey<CreateDealDto>> {
    throw DomainError.invalid('operation', 'deals have no unique field to match an upsert on; use create or update.', 'upsert_unsupported');
  }

  /** The first contact, company or owner each item names that does not exist, as the single write's 400. One request for all. */
  private async missingLinks(ctx: RequestContext, items: Array<{ index: number; links: Links }>): Promise<Map<number, DomainError>> {
    const named = (field: (typeof LINKS)[number]['field']) => items.map((i) => i.links[field]).filter((id): id is string => typeof id === 'string');
    const reply = await this.directory.resolveMany(ctx, { contact_ids: named('contact_id'), company_ids: named('company_id'), user_ids: named('owner_id') });
    const known = {
      contacts: new Set(reply.contacts.map((c) => c.id)),
      companies: new Set(reply.companies.map((c) => c.id)),
      users: new Set(reply.users.map((u) => u.id)),
    };
    const errors = new Map<number, DomainError>();
    for (const item of items) {
      const issues = LINKS.filter((l) => typeof item.links[l.field] === 'string' && !known[l.reply].has(item.links[l.field]!)).map((l) => ({
        field: l.field,
        code: 'not_found',
        message: `No ${l.noun} with id '${item.links[l.field]}'.`,
      }));
      if (issues.length) errors.set(item.index, new DomainError(ErrorCode.ValidationFailed, issues.map((i) => i.message).join(' '), issues));
    }
    return errors;
  }

  /**
   * Each item's stage (the one stage check of every deal write), or the 400 naming what is wrong; and the
   * clock read with the stages, in the same round trip, when there was one to read.
   */
  private async stages(
    m: EntityManager,
    items: Array<{ index: number; pipelineId: string; stageId: string | undefined }>,
  ): Promise<{ byItem: Map<number, Stage | DomainError>; now?: Date }> {
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

  /** Stage history of placed or moved deals, one insert. */
  private async history(m: EntityManager, ctx: RequestContext, moves: Array<{ deal: Deal; from: string | null }>, at: Date): Promise<void> {
    const actor = actorOf(ctx);
    const rows = moves.map(({ deal, from }) =>
      columnValues(
        m,
        StageHistory,
        {
          id: newId(IdPrefix.StageHistory),
          dealId: deal.id,
          fromStageId: from,
          toStageId: deal.stageId,
          changedAt: at,
          changedBy: actor.userId ?? SERVICE_USER_ID,
          changedByKeyId: actor.keyId,
        },
        ['id', 'dealId', 'fromStageId', 'toStageId', 'changedAt', 'changedBy', 'changedByKeyId'],
      ),
    );
    await insertRows(m, StageHistory, rows);
  }

  private async clock(m: EntityManager): Promise<Date> {
    const [{ now }] = (await m.query(`SELECT clock_timestamp() AS now`)) as Array<{ now: Date }>;
    return now;
  }
}
