import { readableResources, type ApiScope, type ChangeVia, type RequestContext } from '@crm/contracts';
import type { Context } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'http';

/** Who a request was authenticated as: an API key, or a bearer token's subject. */
export interface Principal {
  /** The API key, for a request made with one. */
  keyId?: string;
  /** A bearer token's `sub`, for a request made with a token. */
  subject?: string;
  /** A key's named scope, or `custom` for a key made with `scopes` and for a token. */
  scope: ApiScope | 'custom';
  /** What the key may do (docs/api.md, "Permissions"): a named scope's set, or the key's own `scopes`. */
  permissions: readonly string[];
  /** The team member the key belongs to, or whose external_id is the token's subject, if any. */
  userId?: string;
  /** A bearer token's `exp`: a key it makes expires no later (docs/api.md, "API keys"). */
  expiresAt?: Date;
}

/** A principal authenticated with an API key. */
export type KeyPrincipal = Principal & { keyId: string };

/** The caller's own rate-limit bucket and idempotency namespace: the key, or the token's subject. */
export function callerOf(principal: Principal): string {
  return principal.keyId !== undefined ? `key:${principal.keyId}` : `sub:${principal.subject}`;
}

export interface GatewayRequest extends FastifyRequest {
  principal?: Principal;
  /** Set when the request carries an Idempotency-Key; passed to the service as `ctx.idempotency_ref`. */
  idempotencyRef?: string;
  /** The request's server span, parent of the hop to the owning service (see TracingHook). */
  traceContext?: Context;
}

/** Sets the request's key, on the raw request too: the request log reads that one when the response is done. */
export function authenticate(req: GatewayRequest, principal: Principal): void {
  req.principal = principal;
  (req.raw as IncomingMessage & { principal?: Principal }).principal = principal;
}

/** The request's path, without its query string. */
export function pathOf(req: FastifyRequest): string {
  const url = req.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** What the key may read, for the services to narrow their answers by; nothing for a key that may read everything. */
function readableOf(principal: Principal | undefined): { readable?: string[] } {
  const readable = principal && readableResources(principal.permissions);
  return readable ? { readable } : {};
}

/** `via` is the channel the request came through: `api`, or `mcp` for an agent's tool call. */
export function contextOf(req: GatewayRequest, via: ChangeVia = 'api'): RequestContext {
  return {
    request_id: req.id,
    key_id: req.principal?.keyId,
    subject: req.principal?.subject,
    scope: req.principal?.scope,
    user_id: req.principal?.userId,
    ...readableOf(req.principal),
    idempotency_ref: req.idempotencyRef,
    via,
  };
}
