import { DomainError, ErrorCode } from '@crm/common';
import { AnyOperation, Ops, PERMISSION_ACTIONS, PERMISSION_RESOURCES } from '@crm/contracts';
import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { isLoopbackHost } from '../config';
import { Scopes } from '../http/scopes';
import { BearerTokens } from './bearer-tokens';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** Managing API keys stays with API keys: a key made with a token would outlive the token and its sign-in. */
const NOT_ADVERTISED = new Set(['apikeys']);

/**
 * What a client should ask the identity provider for (RFC 9728: the scopes used in authorization
 * requests): each permission some operation needs, read from the operation table; a batch that deletes
 * needs `delete`. No wildcard (`*:*`, `contacts:*`), which a client that asks for every scope listed would
 * otherwise get, and no `apikeys:*`. A token holding a wildcard the provider granted is still honoured.
 */
export const SCOPES_SUPPORTED: readonly string[] = (() => {
  const used = new Set<string>();
  for (const op of Object.values(Ops).flatMap((group) => Object.values(group as Record<string, AnyOperation>))) {
    const permission = op.http?.permission;
    if (!permission || permission.narrowed || permission.resource === '*') continue;
    const resource = permission.resource === 'objects.:slug' ? 'objects' : permission.resource;
    if (NOT_ADVERTISED.has(resource)) continue;
    used.add(`${resource}:${permission.action}`);
    if (permission.batch) used.add(`${resource}:delete`);
  }
  return PERMISSION_RESOURCES.flatMap((resource) => PERMISSION_ACTIONS.map((action) => `${resource}:${action}`)).filter((p) => used.has(p));
})();

/**
 * Where a client finds this document, named in the 401 challenge on /mcp: the configured audience (the
 * API's public URL) and this path, never the request's Host header, which a client or anyone between
 * could forge. An audience that is not an https URL (http on loopback) has no such place to name.
 */
export function resourceMetadataUrl(audience: string): string | undefined {
  let url: URL;
  try {
    url = new URL(audience);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${PROTECTED_RESOURCE_PATH}`;
}

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
