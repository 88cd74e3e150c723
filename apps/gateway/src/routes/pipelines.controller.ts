import { PageQuery } from '@crm/common';
import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CreatePipelineDto, DealView, DeleteWithMoveQuery, PipelineDealsQuery, PipelineView, PipelinesRpc, ReorderStagesDto, StageInputDto, UpdatePipelineDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Put, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('pipelines')
export class PipelinesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, PipelineView, { summary: 'Create a pipeline with its stages', body: CreatePipelineDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(PipelineView, { summary: 'List pipelines', query: PageQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, PipelineView, { summary: 'Get a pipeline' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, PipelineView, { summary: 'Update a pipeline', body: UpdatePipelineDto }, { warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a pipeline' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.Delete, req);
  }

  @Get(':id/deals')
  @Scopes('read')
  @ApiPage(DealView, { summary: "List a pipeline's deals", query: PipelineDealsQuery })
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ListDeals, req);
  }

  @Post(':id/stages')
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, PipelineView, { summary: 'Add a stage', body: StageInputDto })
  addStage(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.AddStage, req);
  }

  @Put(':id/stages')
  @Scopes('write')
  @ApiResource(200, PipelineView, { summary: 'Reorder the stages', body: ReorderStagesDto })
  reorderStages(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ReorderStages, req);
  }

  @Delete(':id/stages/:stage_id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a stage, moving its deals', query: DeleteWithMoveQuery })
  async deleteStage(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.DeleteStage, req);
  }
}
