import { ActivitiesRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';

@Controller('activities')
export class ActivitiesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Create, req);
  }

  @Get()
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.List, req);
  }

  @Get(':id')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Get, req);
  }

  @Patch(':id')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Update, req);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ActivitiesRpc.Delete, req);
  }
}
