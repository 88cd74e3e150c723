import { InputPipe, PageQuery } from '@crm/common';
import { AddStageDto, CreatePipelineDto, DeleteWithMoveQuery, PipelineDealsQuery, PipelinesRpc, ReorderStagesDto, RequestContext, UpdatePipelineDto } from '@crm/contracts';
import { SoftWarningsInterceptor } from '@crm/runtime';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { actorOf } from '../deals/deal-stage-mover';
import { DealsService } from '../deals/deals.service';
import { PipelinesService } from './pipelines.service';

@Controller()
export class PipelinesController {
  constructor(private readonly pipelines: PipelinesService, private readonly deals: DealsService) {}

  @MessagePattern(PipelinesRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('body', new InputPipe(CreatePipelineDto)) body: CreatePipelineDto) {
    return { data: await this.pipelines.create(ctx, body) };
  }

  @MessagePattern(PipelinesRpc.List)
  list(@Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery) {
    return this.pipelines.list(query);
  }

  @MessagePattern(PipelinesRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.pipelines.get(id) };
  }

  @MessagePattern(PipelinesRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdatePipelineDto)) body: UpdatePipelineDto,
  ) {
    return { data: await this.pipelines.update(ctx, id, body) };
  }

  @MessagePattern(PipelinesRpc.Delete)
  async remove(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(DeleteWithMoveQuery, 'query')) query: DeleteWithMoveQuery,
  ) {
    await this.pipelines.remove(id, query.move_to_stage_id, actorOf(ctx));
  }

  @MessagePattern(PipelinesRpc.ListDeals)
  listDeals(
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PipelineDealsQuery, 'query')) query: PipelineDealsQuery,
  ) {
    return this.deals.listForPipeline(id, query);
  }

  @MessagePattern(PipelinesRpc.AddStage)
  async addStage(
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(AddStageDto)) body: AddStageDto,
  ) {
    return { data: await this.pipelines.addStage(id, body) };
  }

  @MessagePattern(PipelinesRpc.ReorderStages)
  async reorderStages(
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(ReorderStagesDto)) body: ReorderStagesDto,
  ) {
    return { data: await this.pipelines.reorderStages(id, body) };
  }

  @MessagePattern(PipelinesRpc.DeleteStage)
  async removeStage(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id, stage_id }: { id: string; stage_id: string },
    @Payload('query', new InputPipe(DeleteWithMoveQuery, 'query')) query: DeleteWithMoveQuery,
  ) {
    await this.pipelines.removeStage(id, stage_id, query.move_to_stage_id, actorOf(ctx));
  }
}
