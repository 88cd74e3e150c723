import { CursorCodec, DomainError, findById, IdPrefix, isId, keysetPage, Page, SortablePageQuery } from '@crm/common';
import { CreateDealDto, DealView, FullDealView, ListDealsQuery, PipelineDealsQuery, RequestContext, StageHistoryView, UpdateDealDto } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { BatchRunner } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { dealChanges, dealUpdatedChange } from './deal-changes';
import { actorOf, DealStageMover } from './deal-stage-mover';
import { DealViews, FullDealResponse, withIncluded } from './deal-views';
import { Deal } from './deal.entity';
import { presentDeal, presentHistory } from './deal.presenter';
import { DealsBatchWriter } from './deals.batch';
import { StageHistory } from './stage-history.entity';
import { findDeal } from './find-deal';

export type { FullDealResponse } from './deal-views';

const DAY_MS = 86_400_000;

@Injectable()
export class DealsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly mover: DealStageMover,
    private readonly views: DealViews,
    private readonly batches: BatchRunner,
    private readonly writer: DealsBatchWriter,
  ) {}

  /** A batch of one through the deals' writer, so a single create follows every rule a batch or an import does. */
  async create(ctx: RequestContext, dto: CreateDealDto): Promise<DealView> {
    return (await this.batches.one(ctx, this.writer, { create: [{ index: 0, body: dto }] })) as DealView;
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
    return this.full(ctx, await findDeal(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdateDealDto): Promise<FullDealResponse> {
    return withIncluded((await this.batches.one(ctx, this.writer, { update: [{ index: 0, id, body: dto }] })) as FullDealView);
  }

  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.batches.one(ctx, this.writer, { remove: [{ index: 0, id }] });
  }

  /** Moving to the stage the deal is already in changes nothing and records nothing. */
  async moveStage(ctx: RequestContext, id: string, stageId: string): Promise<FullDealResponse> {
    const moved = await this.write(async (m) => {
      const deal = await findDeal(m, id, true);
      const stage = isId(stageId, IdPrefix.Stage) ? await findById(m, Stage, stageId) : null;
      if (!stage || stage.pipelineId !== deal.pipelineId) {
        throw DomainError.invalid('stage_id', `stage_id must be a stage of the deal's pipeline '${deal.pipelineId}'.`);
      }
      if (stage.id === deal.stageId) return { deal, stage };
      const before = { ...deal };
      const events = await this.mover.move(m, deal, stage, actorOf(ctx));
      await this.outbox.record(m, { events, changes: [dealUpdatedChange(id, dealChanges(before, deal))] });
      return { deal, stage };
    });
    return this.full(ctx, moved.deal, [moved.stage]);
  }

  async history(id: string, query: SortablePageQuery): Promise<Page<StageHistoryView>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(StageHistory), 'h', `deals/${id}/history`, query);
    await findDeal(this.dataSource.manager, id);
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

  /** `stages`: those already read (the deal's own among them, or not), so they are not read again. */
  private async full(ctx: RequestContext, deal: Deal, stages: Stage[] = []): Promise<FullDealResponse> {
    return withIncluded((await this.views.full(this.dataSource.manager, ctx, [deal], new Date(), stages)).get(deal.id)!);
  }

  private async write<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }
}
