import type { ApiScope, ChangeVia, RequestContext } from '@crm/contracts';
import type { Context } from '@opentelemetry/api';
import type { Request } from 'express';

/** The API key a request was authenticated with. */
export interface Principal {
  keyId: string;
  scope: ApiScope;
  /** The team member the key belongs to, if any. */
  userId?: string;
}

export interface GatewayRequest extends Request {
  id: string;
  principal?: Principal;
  /** Set when the request carries an Idempotency-Key; passed to the service as `ctx.idempotency_ref`. */
  idempotencyRef?: string;
  /** The request's server span, parent of the hop to the owning service (see TracingMiddleware). */
  traceContext?: Context;
}

/** `via` is the channel the request came through: `api`, or `mcp` for an agent's tool call. */
export function contextOf(req: GatewayRequest, via: ChangeVia = 'api'): RequestContext {
  return {
    request_id: String(req.id),
    key_id: req.principal?.keyId,
    scope: req.principal?.scope,
    user_id: req.principal?.userId,
    idempotency_ref: req.idempotencyRef,
    via,
  };
}
