import { ContactsRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';

@Controller('contacts')
export class ContactsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Create, req);
  }

  @Get()
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.List, req);
  }

  @Post('merge')
  @HttpCode(200)
  merge(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Merge, req);
  }

  @Get(':id')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Get, req);
  }

  @Patch(':id')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Update, req);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ContactsRpc.Delete, req);
  }

  @Get(':id/deals')
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListDeals, req);
  }

  @Get(':id/activities')
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListActivities, req);
  }

  @Get(':id/tasks')
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListTasks, req);
  }
}
