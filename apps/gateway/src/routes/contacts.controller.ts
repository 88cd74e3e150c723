import { ContactsRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('contacts')
export class ContactsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.List, req);
  }

  @Post('merge')
  @Scopes('write')
  @HttpCode(200)
  merge(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Merge, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ContactsRpc.Delete, req);
  }

  @Get(':id/deals')
  @Scopes('read')
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListDeals, req);
  }

  @Get(':id/activities')
  @Scopes('read')
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListActivities, req);
  }

  @Get(':id/tasks')
  @Scopes('read')
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListTasks, req);
  }
}
