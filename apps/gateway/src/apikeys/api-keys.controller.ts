import { PageQuery } from '@crm/common';
import { ApiNoContent, ApiPage, ApiResource } from '../openapi/api-docs.decorators';
import { ApiKeyView, CreatedApiKeyView } from './api-key.presenter';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { contextOf, GatewayRequest } from '../http/request-context';
import { ApiKeysService } from './api-keys.service';
import { Permission, Scopes } from '../http/scopes';
import { RepliesWithSecret } from '../idempotency/secret-reply';
import { Grantor } from './grant-ceiling';

/** API keys belong to the gateway: it is the one process that authenticates requests. */
@Controller('apikeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Scopes('write')
  @Permission({ resource: 'apikeys', action: 'write' })
  @HttpCode(201)
  @RepliesWithSecret()
  @ApiResource(201, CreatedApiKeyView, { summary: 'Create an API key (the full key is in this answer only)', body: CreateApiKeyDto })
  create(@Req() req: GatewayRequest, @Body() body: unknown) {
    return this.keys.create(contextOf(req), body, this.grantorOf(req));
  }

  @Get()
  @Scopes('read')
  @Permission({ resource: 'apikeys', action: 'read' })
  @ApiPage(ApiKeyView, { summary: 'List API keys', query: PageQuery })
  list(@Query() query: unknown) {
    return this.keys.list(query);
  }

  @Delete(':id')
  @Scopes('write')
  @Permission({ resource: 'apikeys', action: 'delete' })
  @HttpCode(204)
  @ApiNoContent({ summary: 'Revoke an API key, effective on every gateway within seconds' })
  async revoke(@Req() req: GatewayRequest, @Param('id') id: string) {
    await this.keys.revoke(id, contextOf(req), this.grantorOf(req));
  }

  /** The caller, as what bounds the keys it makes and revokes: a bearer token's keys expire with it. */
  private grantorOf(req: GatewayRequest): Grantor {
    const { subject, permissions, userId, expiresAt } = req.principal!;
    return { caller: subject !== undefined ? 'token' : 'key', permissions, userId, ...(expiresAt ? { expiresAt } : {}) };
  }
}
