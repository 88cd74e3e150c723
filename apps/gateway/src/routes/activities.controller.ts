import { ActivitiesRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('activities')
export class ActivitiesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ActivitiesRpc.Delete, req);
  }
}
