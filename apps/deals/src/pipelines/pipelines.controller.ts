import { SortablePageQuery } from '@crm/common';
import {
  AddStageDto,
  CreatePipelineDto,
  DeleteWithMoveQuery,
  Ops,
  PipelineDealsQuery,
  PipelineReportQuery,
  ReorderStagesDto,
  RequestContext,
  UpdatePipelineDto,
} from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { actorOf } from '../deals/deal-stage-mover';
import { DealsService } from '../deals/deals.service';
import { PipelineReportService } from './pipeline-report.service';
import { PipelinesService } from './pipelines.service';

@Controller()
export class PipelinesController {
  constructor(
    private readonly pipelines: PipelinesService,
    private readonly deals: DealsService,
    private readonly reports: PipelineReportService,
  ) {}

  @Handles(Ops.pipelines.create)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreatePipelineDto) {
    return { data: await this.pipelines.create(ctx, body) };
  }

  @Handles(Ops.pipelines.list)
  list(@Payload('query') query: SortablePageQuery) {
    return this.pipelines.list(query);
  }

  @Handles(Ops.pipelines.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.pipelines.get(id) };
  }

  @Handles(Ops.pipelines.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdatePipelineDto) {
    return { data: await this.pipelines.update(ctx, id, body) };
  }

  @Handles(Ops.pipelines.remove)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('query') query: DeleteWithMoveQuery) {
    await this.pipelines.remove(id, query.move_to_stage_id, actorOf(ctx));
  }

  @Handles(Ops.pipelines.deals)
  listDeals(@Payload('params') { id }: { id: string }, @Payload('query') query: PipelineDealsQuery) {
    return this.deals.listForPipeline(id, query);
  }

  @Handles(Ops.pipelines.report)
  async report(@Payload('params') { pipeline_id }: { pipeline_id: string }, @Payload('query') query: PipelineReportQuery) {
    return { data: await this.reports.report(pipeline_id, query) };
  }

  @Handles(Ops.pipelines.addStage)
  async addStage(@Payload('params') { id }: { id: string }, @Payload('body') body: AddStageDto) {
    return { data: await this.pipelines.addStage(id, body) };
  }

  @Handles(Ops.pipelines.reorderStages)
  async reorderStages(@Payload('params') { id }: { id: string }, @Payload('body') body: ReorderStagesDto) {
    return { data: await this.pipelines.reorderStages(id, body) };
  }

  @Handles(Ops.pipelines.deleteStage)
  async removeStage(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id, stage_id }: { id: string; stage_id: string },
    @Payload('query') query: DeleteWithMoveQuery,
  ) {
    await this.pipelines.removeStage(id, stage_id, query.move_to_stage_id, actorOf(ctx));
  }
}
