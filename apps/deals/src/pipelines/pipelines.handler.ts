import { PageQuery, validateInput } from '@crm/common';
import { AddStageDto, CreatePipelineDto, DeleteWithMoveQuery, PipelineDealsQuery, PipelinesRpc, ReorderStagesDto, RpcRequest, UpdatePipelineDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DealsService } from '../deals/deals.service';
import { PipelinesService } from './pipelines.service';

type IdParams = { id: string };

@Injectable()
export class PipelinesHandler {
  constructor(
    private readonly pipelines: PipelinesService,
    private readonly deals: DealsService,
  ) {}

  @RpcHandler(PipelinesRpc.Create)
  async create(req: RpcRequest) {
    return { data: await this.pipelines.create(validateInput(CreatePipelineDto, req.body)) };
  }

  @RpcHandler(PipelinesRpc.List)
  list(req: RpcRequest) {
    return this.pipelines.list(validateInput(PageQuery, req.query, 'query'));
  }

  @RpcHandler(PipelinesRpc.Get)
  async get(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return { data: await this.pipelines.get(req.params.id) };
  }

  @RpcHandler(PipelinesRpc.Update)
  async update(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return { data: await this.pipelines.update(req.params.id, validateInput(UpdatePipelineDto, req.body)) };
  }

  @RpcHandler(PipelinesRpc.Delete)
  async remove(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    const query = validateInput(DeleteWithMoveQuery, req.query, 'query');
    await this.pipelines.remove(req.params.id, query.move_to_stage_id, { keyId: req.ctx.key_id ?? null });
  }

  @RpcHandler(PipelinesRpc.ListDeals)
  listDeals(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return this.deals.listForPipeline(req.params.id, validateInput(PipelineDealsQuery, req.query, 'query'));
  }

  @RpcHandler(PipelinesRpc.AddStage)
  async addStage(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return { data: await this.pipelines.addStage(req.params.id, validateInput(AddStageDto, req.body)) };
  }

  @RpcHandler(PipelinesRpc.ReorderStages)
  async reorderStages(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return { data: await this.pipelines.reorderStages(req.params.id, validateInput(ReorderStagesDto, req.body)) };
  }

  @RpcHandler(PipelinesRpc.DeleteStage)
  async removeStage(req: RpcRequest<unknown, Record<string, unknown>, IdParams & { stage_id: string }>) {
    const query = validateInput(DeleteWithMoveQuery, req.query, 'query');
    await this.pipelines.removeStage(req.params.id, req.params.stage_id, query.move_to_stage_id, { keyId: req.ctx.key_id ?? null });
  }
}
