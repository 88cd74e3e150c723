import { readableResources, type ApiScope, type ChangeVia, type RequestContext } from '@crm/contracts';
import type { Context } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'http';

/** The API key a request was authenticated with. */
export interface Principal {
  keyId: string;
  scope: ApiScope | 'custom';
  /** What the key may do (docs/api.md, "Permissions"): a named scope's set, or the key's own `scopes`. */
  permissions: readonly string[];
  /** The team member the key belongs to, if any. */
  userId?: string;
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
    scope: req.principal?.scope,
    user_id: req.principal?.userId,
    ...readableOf(req.principal),
    idempotency_ref: req.idempotencyRef,
    via,
  };
}
