import {
  CursorCodec,
  diffFields,
  DomainError,
  fieldSpecs,
  findById,
  IdPrefix,
  isId,
  keysetPage,
  newId,
  Page,
  SortablePageQuery,
  transactionOf,
} from '@crm/common';
import {
  CreateDealDto,
  DealCreatedData,
  DealView,
  event,
  EventType,
  FullDealView,
  ListDealsQuery,
  PipelineDealsQuery,
  RelatedSummary,
  RequestContext,
  StageHistoryView,
  UpdateDealDto,
} from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { BuiltInCustomFieldsService } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { DealContacts } from '../deal-contacts/deal-contacts';
import { ContactsDirectory } from './contacts-directory';
import { dealChanges, dealCreatedChange, dealDeletedChange, dealUpdatedChange } from './deal-changes';
import { actorOf, DealStageMover } from './deal-stage-mover';
import { Deal } from './deal.entity';
import { presentDeal, presentHistory } from './deal.presenter';
import { StageHistory } from './stage-history.entity';

export interface FullDealResponse {
  data: FullDealView;
  included: RelatedSummary[];
}

/** Fields a PATCH may change other than the stage and status, with their column properties. */
export const DEAL_FIELDS = fieldSpecs<Deal>({
  name: 'value',
  contact_id: 'value',
  company_id: 'value',
  value: 'value',
  currency: 'value',
  owner_id: 'value',
  source: 'value',
  loss_reason: 'value',
  expected_close: 'date',
  metadata: 'json',
  custom_fields: 'json',
});

const DAY_MS = 86_400_000;

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
    createdAt: now,
    updatedAt: now,
  };
}

export function dealCreatedData(deal: Deal): DealCreatedData {
  return {
    deal_id: deal.id,
    name: deal.name,
    pipeline_id: deal.pipelineId,
    stage_id: deal.stageId,
    contact_id: deal.contactId,
    company_id: deal.companyId,
    value: deal.value,
    currency: deal.currency,
    status: deal.status,
  };
}

@Injectable()
export class DealsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly mover: DealStageMover,
    private readonly directory: ContactsDirectory,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly dealContacts: DealContacts,
  ) {}

  /** `within` runs the write in a savepoint of that transaction (an import batch) instead of its own transaction. */
  async create(ctx: RequestContext, dto: CreateDealDto, within?: EntityManager): Promise<DealView> {
    await this.directory.assertExist(ctx, dto);
    const deal = await this.write(async (m) => {
      const stage = await this.stageOf(m, dto.pipeline_id, dto.stage_id, 'stage_id');
      const [{ now }] = (await m.query(`SELECT clock_timestamp() AS now`)) as Array<{ now: Date }>;
      const id = newId(IdPrefix.Deal);
      const row = newDeal(id, dto, stage, (await this.customFields.values(m, ctx, 'deals', id, dto.custom_fields))!, now);
      await m.insert(Deal, row);
      await this.mover.recordPlacement(m, row, actorOf(ctx));
      const contact = await this.dealContacts.followPrimary(m, [{ owner: id, from: null, to: row.contactId }]);
      await this.outbox.record(m, {
        events: [event(EventType.DealCreated, dealCreatedData(row)), ...contact.events],
        changes: [dealCreatedChange(row), ...contact.changes],
      });
      await this.mover.announceStatus(m, row, null);
      return row;
    }, within);
    return presentDeal(deal);
  }

  async list(query: ListDealsQuery): Promise<Page<DealView>> {
    return this.page('deals', query, query);
  }

  async listForPipeline(pipelineId: string, query: PipelineDealsQuery): Promise<Page<DealView>> {
    const exists = isId(pipelineId, IdPrefix.Pipeline) && (await this.dataSource.getRepository(Pipeline).exists({ where: { id: pipelineId } }));
    if (!exists) throw DomainError.notFound('pipeline', pipelineId);
    return this.page(`pipelines/${pipelineId}/deals`, query, { ...query, pipeline_id: pipelineId });
  }

  async get(ctx: RequestContext, id: string): Promise<FullDealResponse> {
    return this.full(ctx, await this.find(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdateDealDto): Promise<FullDealResponse> {
    await this.directory.assertExist(ctx, { contact_id: dto.contact_id, company_id: dto.company_id, owner_id: dto.owner_id });
    const deal = await this.write(async (m) => {
      if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, 'deals');
      const deal = await this.find(m, id, true);
      const before = { ...deal };
      const input: Record<string, unknown> = { ...dto };
      input.custom_fields = await this.customFields.values(m, ctx, 'deals', id, dto.custom_fields, deal.customFields ?? {});
      const { set } = diffFields(deal, input, DEAL_FIELDS);
      Object.assign(deal, set);

      const target = await this.targetStage(m, deal, dto);
      if (target) {
        // The mover writes the stage, status and history; the plain fields follow below.
        await this.mover.move(m, deal, target, actorOf(ctx), dto.status);
      } else if (dto.status !== undefined && dto.status !== before.status) {
        deal.status = dto.status;
        await this.mover.announceStatus(m, deal, before.status);
      }
      const changes = dealChanges(before, deal);
      if (!changes.changed.length) return deal;
      const [{ now }] = (await m.query(`SELECT clock_timestamp() AS now`)) as Array<{ now: Date }>;
      deal.updatedAt = now;
      await m.update(
        Deal,
        { id },
        {
          name: deal.name,
          contactId: deal.contactId,
          companyId: deal.companyId,
          value: deal.value,
          currency: deal.currency,
          ownerId: deal.ownerId,
          source: deal.source,
          lossReason: deal.lossReason,
          expectedClose: deal.expectedClose,
          metadata: deal.metadata,
          customFields: deal.customFields,
          status: deal.status,
          updatedAt: now,
        },
      );
      const contact = await this.dealContacts.followPrimary(m, [{ owner: id, from: before.contactId, to: deal.contactId }]);
      await this.outbox.record(m, {
        events: [event(EventType.DealUpdated, { deal_id: id, ...changes }), ...contact.events],
        changes: [dealUpdatedChange(id, changes), ...contact.changes],
      });
      return deal;
    });
    return this.full(ctx, deal);
  }

  async remove(id: string): Promise<void> {
    await this.write(async (m) => {
      const deal = await this.find(m, id, true);
      const contacts = await this.dealContacts.removeForOwners(m, [id]);
      await m.delete(Deal, { id });
      await this.outbox.record(m, {
        events: [...contacts.events, event(EventType.DealDeleted, { deal_id: id })],
        changes: [...contacts.changes, dealDeletedChange(deal)],
      });
    });
  }

  /** Moving to the stage the deal is already in changes nothing and records nothing. */
  async moveStage(ctx: RequestContext, id: string, stageId: string): Promise<FullDealResponse> {
    const deal = await this.write(async (m) => {
      const deal = await this.find(m, id, true);
      const stage = isId(stageId, IdPrefix.Stage) ? await findById(m, Stage, stageId) : null;
      if (!stage || stage.pipelineId !== deal.pipelineId) {
        throw DomainError.invalid('stage_id', `stage_id must be a stage of the deal's pipeline '${deal.pipelineId}'.`);
      }
      if (stage.id === deal.stageId) return deal;
      const before = { ...deal };
      await this.mover.move(m, deal, stage, actorOf(ctx));
      await this.outbox.record(m, { changes: [dealUpdatedChange(id, dealChanges(before, deal))] });
      return deal;
    });
    return this.full(ctx, deal);
  }

  async history(id: string, query: SortablePageQuery): Promise<Page<StageHistoryView>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(StageHistory), 'h', `deals/${id}/history`, query);
    await this.find(this.dataSource.manager, id);
    qb.andWhere('h.deal_id = :id', { id });
    return read(presentHistory);
  }

  private async page(list: string, query: SortablePageQuery, filters: ListDealsQuery): Promise<Page<DealView>> {
    const rangeFiltered = [filters.min_value, filters.max_value, filters.created_after, filters.created_before, filters.days_since_activity_gt].some(
      (v) => v !== undefined,
    );
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(Deal), 'd', list, query, { rangeFiltered });
    this.applyFilters(qb, filters);
    const now = new Date();
    return read((d) => presentDeal(d, now));
  }

  private applyFilters(qb: SelectQueryBuilder<Deal>, q: ListDealsQuery): void {
    if (q.status !== undefined) qb.andWhere('d.status = :status', { status: q.status });
    if (q.pipeline_id !== undefined) qb.andWhere('d.pipeline_id = :pipelineId', { pipelineId: q.pipeline_id });
    if (q.stage_id !== undefined) qb.andWhere('d.stage_id = :stageId', { stageId: q.stage_id });
    if (q.contact_id !== undefined) qb.andWhere('d.contact_id = :contactId', { contactId: q.contact_id });
    if (q.company_id !== undefined) qb.andWhere('d.company_id = :companyId', { companyId: q.company_id });
    if (q.owner_id !== undefined) qb.andWhere('d.owner_id = :ownerId', { ownerId: q.owner_id });
    if (q.min_value !== undefined) qb.andWhere('d.value >= :minValue', { minValue: q.min_value });
    if (q.max_value !== undefined) qb.andWhere('d.value <= :maxValue', { maxValue: q.max_value });
    if (q.created_after !== undefined) qb.andWhere('d.created_at > :createdAfter', { createdAfter: new Date(q.created_after) });
    if (q.created_before !== undefined) qb.andWhere('d.created_at < :createdBefore', { createdBefore: new Date(q.created_before) });
    if (q.days_since_activity_gt !== undefined) {
      // More than N whole days without activity: at least N + 1 full days since the last one.
      const cutoff = new Date(Date.now() - (q.days_since_activity_gt + 1) * DAY_MS);
      qb.andWhere('COALESCE(d.last_activity_at, d.created_at) <= :cutoff', { cutoff });
    }
  }

  /** The stage an update moves the deal to, or undefined when it stays where it is. */
  private async targetStage(m: EntityManager, deal: Deal, dto: UpdateDealDto): Promise<Stage | undefined> {
    if (dto.pipeline_id === undefined && dto.stage_id === undefined) return undefined;
    const pipelineId = dto.pipeline_id ?? deal.pipelineId;
    if (dto.stage_id === undefined) {
      if (pipelineId === deal.pipelineId) return undefined;
      throw DomainError.invalid('stage_id', 'stage_id is required when pipeline_id changes.', 'required');
    }
    const stage = await this.stageOf(m, pipelineId, dto.stage_id, 'stage_id');
    return stage.id === deal.stageId ? undefined : stage;
  }

  /** The stage `stageId` of pipeline `pipelineId`, or a 400 naming what is wrong. */
  private async stageOf(m: EntityManager, pipelineId: string, stageId: string, field: string): Promise<Stage> {
    const stage = isId(stageId, IdPrefix.Stage) ? await findById(m, Stage, stageId) : null;
    // A stage of the named pipeline proves the pipeline exists; only otherwise is the pipeline looked up, to name the right field.
    if (stage && stage.pipelineId === pipelineId) return stage;
    const pipelineExists = isId(pipelineId, IdPrefix.Pipeline) && (await m.exists(Pipeline, { where: { id: pipelineId } }));
    if (!pipelineExists) throw DomainError.invalid('pipeline_id', `No pipeline with id '${pipelineId}'.`, 'not_found');
    throw DomainError.invalid(field, `stage_id must be a stage of pipeline '${pipelineId}'.`);
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Deal> {
    const deal = isId(id, IdPrefix.Deal) ? await findById(m, Deal, id, lock) : null;
    if (!deal) throw DomainError.notFound('deal', id);
    return deal;
  }

  private async full(ctx: RequestContext, deal: Deal): Promise<FullDealResponse> {
    const [links, pipeline, stage] = await Promise.all([
      this.directory.describe(ctx, { contact_id: deal.contactId, company_id: deal.companyId, owner_id: deal.ownerId }),
      findById(this.dataSource.manager, Pipeline, deal.pipelineId),
      findById(this.dataSource.manager, Stage, deal.stageId),
    ]);
    const view: FullDealView = {
      ...presentDeal(deal),
      relationships: {
        contact: links.contact,
        company: links.company,
        pipeline: { type: 'pipeline', id: deal.pipelineId, name: pipeline?.name ?? '' },
        stage: { type: 'stage', id: deal.stageId, name: stage?.name ?? '' },
        owner: links.owner,
      },
    };
    const included = [links.contact, links.company, links.owner].filter((r): r is RelatedSummary => r !== null);
    return { data: view, included };
  }

  private async write<T>(work: (m: EntityManager) => Promise<T>, within?: EntityManager): Promise<T> {
    return transactionOf(this.dataSource, within)(work);
  }
}
