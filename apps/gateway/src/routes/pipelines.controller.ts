import { PipelinesRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Put, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';

@Controller('pipelines')
export class PipelinesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Create, req);
  }

  @Get()
  list(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.List, req);
  }

  @Get(':id')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Get, req);
  }

  @Patch(':id')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.Update, req);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.Delete, req);
  }

  @Get(':id/deals')
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ListDeals, req);
  }

  @Post(':id/stages')
  @HttpCode(201)
  addStage(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.AddStage, req);
  }

  @Put(':id/stages')
  reorderStages(@Req() req: GatewayRequest) {
    return this.forward.to(PipelinesRpc.ReorderStages, req);
  }

  @Delete(':id/stages/:stage_id')
  @HttpCode(204)
  async deleteStage(@Req() req: GatewayRequest) {
    await this.forward.to(PipelinesRpc.DeleteStage, req);
  }
}
