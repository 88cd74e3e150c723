import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service';

/** API keys belong to the gateway: it is the one process that authenticates requests. */
@Controller('apikeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  create(@Body() body: unknown) {
    return this.keys.create(body);
  }

  @Get()
  list(@Query() query: unknown) {
    return this.keys.list(query);
  }

  @Delete(':id')
  @HttpCode(204)
  async revoke(@Param('id') id: string) {
    await this.keys.revoke(id);
  }
}
