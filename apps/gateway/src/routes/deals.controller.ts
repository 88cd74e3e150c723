import { ContactsRpc, DealsRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('deals')
export class DealsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(DealsRpc.Delete, req);
  }

  @Post(':id/stage')
  @Scopes('write')
  @HttpCode(200)
  moveStage(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.MoveStage, req);
  }

  @Get(':id/history')
  @Scopes('read')
  history(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.History, req);
  }

  /** Activities and tasks are kept by the contacts service. */
  @Get(':id/activities')
  @Scopes('read')
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealActivities, req);
  }

  @Get(':id/tasks')
  @Scopes('read')
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealTasks, req);
  }
}
