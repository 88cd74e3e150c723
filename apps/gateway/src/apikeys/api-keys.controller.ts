import { PageQuery } from '@crm/common';
import { ApiNoContent, ApiPage, ApiResource } from '../openapi/api-docs.decorators';
import { ApiKeyView, CreatedApiKeyView } from './api-key.presenter';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { BearerTokens } from '../auth/bearer-tokens';
import { contextOf, GatewayRequest } from '../http/request-context';
import { ApiKeysService } from './api-keys.service';
import { Permission, Scopes } from '../http/scopes';
import { RepliesWithSecret } from '../idempotency/secret-reply';
import { Grantor } from './grant-ceiling';

/** API keys belong to the gateway: it is the one process that authenticates requests. */
@Controller('apikeys')
export class ApiKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly tokens: BearerTokens,
  ) {}

  @Post()
  @Scopes('write')
  @Permission({ resource: 'apikeys', action: 'write' })
  @HttpCode(201)
  @RepliesWithSecret()
  @ApiResource(201, CreatedApiKeyView, { summary: 'Create an API key (the full key is in this answer only)', body: CreateApiKeyDto })
  async create(@Req() req: GatewayRequest, @Body() body: unknown) {
    return this.keys.create(contextOf(req), body, await this.grantorOf(req, true));
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
    await this.keys.revoke(id, contextOf(req), await this.grantorOf(req, false));
  }

  /** The caller, as what bounds the keys it makes and revokes; `expiry`: with its bearer token's expiry. */
  private async grantorOf(req: GatewayRequest, expiry: boolean): Promise<Grantor> {
    const principal = req.principal!;
    const grantor: Grantor = { caller: principal.subject !== undefined ? 'token' : 'key', permissions: principal.permissions, userId: principal.userId };
    if (grantor.caller === 'key' || !expiry) return grantor;
    // The principal does not carry the token's expiry: the token the access hook accepted is read again.
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const verified = await this.tokens.verify(token);
    if (!verified.ok) throw verified.error;
    return { ...grantor, expiresAt: verified.token.expiresAt };
  }
}
