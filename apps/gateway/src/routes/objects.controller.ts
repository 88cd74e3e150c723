import { ObjectRecordsRpc, ObjectTypesRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

/** Custom object types, custom fields (also of built-in objects) and custom object records: the contacts service. */
@Controller('objects')
export class ObjectsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.List, req);
  }

  @Get(':slug')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.Get, req);
  }

  @Patch(':slug')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.Update, req);
  }

  @Post(':slug/fields')
  @Scopes('write')
  @HttpCode(201)
  addField(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.AddField, req);
  }

  @Post(':slug/records')
  @Scopes('write')
  @HttpCode(201)
  createRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Create, req);
  }

  @Get(':slug/records')
  @Scopes('read')
  listRecords(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.List, req);
  }

  @Get(':slug/records/:id')
  @Scopes('read')
  getRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Get, req);
  }

  @Patch(':slug/records/:id')
  @Scopes('write')
  updateRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Update, req);
  }

  @Delete(':slug/records/:id')
  @Scopes('write')
  @HttpCode(204)
  async removeRecord(@Req() req: GatewayRequest) {
    await this.forward.to(ObjectRecordsRpc.Delete, req);
  }
}
