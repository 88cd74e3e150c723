import { CompaniesRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('companies')
export class CompaniesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(CompaniesRpc.Delete, req);
  }
}
