import { ContactsRpc, DealsRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';

@Controller('deals')
export class DealsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Create, req);
  }

  @Get()
  list(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.List, req);
  }

  @Get(':id')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Get, req);
  }

  @Patch(':id')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Update, req);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(DealsRpc.Delete, req);
  }

  @Post(':id/stage')
  @HttpCode(200)
  moveStage(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.MoveStage, req);
  }

  @Get(':id/history')
  history(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.History, req);
  }

  /** Activities and tasks are kept by the contacts service. */
  @Get(':id/activities')
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealActivities, req);
  }

  @Get(':id/tasks')
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealTasks, req);
  }
}
