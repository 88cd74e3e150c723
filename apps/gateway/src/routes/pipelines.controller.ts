import { PipelinesRpc } from '@crm/contracts';
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
  create(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.Delete, req);
  }

  @Get(':id/deals')
  @Scopes('read')
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ListDeals, req);
  }

  @Post(':id/stages')
  @Scopes('write')
  @HttpCode(201)
  addStage(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.AddStage, req);
  }

  @Put(':id/stages')
  @Scopes('write')
  reorderStages(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ReorderStages, req);
  }

  @Delete(':id/stages/:stage_id')
  @Scopes('write')
  @HttpCode(204)
  async deleteStage(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.DeleteStage, req);
  }
}
