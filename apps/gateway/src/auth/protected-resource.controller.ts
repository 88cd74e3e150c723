import { DomainError, ErrorCode } from '@crm/common';
import { PERMISSION_ACTIONS, PERMISSION_RESOURCES } from '@crm/contracts';
import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Scopes } from '../http/scopes';
import { BearerTokens } from './bearer-tokens';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Every permission a token's `scope` may hold, but for `objects.<slug>`, whose slugs are the deployment's own. */
export const SCOPES_SUPPORTED: readonly string[] = ['*', ...PERMISSION_RESOURCES].flatMap((resource) =>
  [...PERMISSION_ACTIONS, '*'].map((action) => `${resource}:${action}`),
);

/** The RFC 9728 metadata of this API as an OAuth protected resource. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: readonly string[];
  bearer_methods_supported: string[];
  resource_name: string;
}

/**
 * `GET /.well-known/oauth-protected-resource` (RFC 9728), open without a key: where a client (an MCP
 * client, say) gets a token for this API. It exists only when bearer tokens are configured; otherwise it
 * is 404, as for any path the gateway does not serve, since there is no authorization server to name.
 */
@ApiExcludeController()
@Controller(PROTECTED_RESOURCE_PATH.slice(1))
export class ProtectedResourceController {
  constructor(private readonly tokens: BearerTokens) {}

  @Get()
  @Scopes('public')
  @Header('Cache-Control', 'public, max-age=3600')
  get(): ProtectedResourceMetadata {
    const settings = this.tokens.configured;
    if (!settings) throw new DomainError(ErrorCode.NotFound, `No route GET ${PROTECTED_RESOURCE_PATH}.`);
    return {
      resource: settings.audience,
      authorization_servers: [settings.issuer],
      scopes_supported: SCOPES_SUPPORTED,
      bearer_methods_supported: ['header'],
      resource_name: 'CRM API',
    };
  }
}
