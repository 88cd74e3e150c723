import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { contextOf, GatewayRequest } from '../http/request-context';
import { ApiKeysService } from './api-keys.service';
import { Scopes } from '../http/scopes';

/** API keys belong to the gateway: it is the one process that authenticates requests. */
@Controller('apikeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  create(@Req() req: GatewayRequest, @Body() body: unknown) {
    return this.keys.create(contextOf(req), body);
  }

  @Get()
  @Scopes('read')
  list(@Query() query: unknown) {
    return this.keys.list(query);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async revoke(@Param('id') id: string) {
    await this.keys.revoke(id);
  }
}
