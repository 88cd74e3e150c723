import type { ChangeVia } from './changes/changes';

export const API_SCOPES = ['read', 'read-write', 'capture-only'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** Who is calling, carried from the gateway to the service that does the work. */
export interface RequestContext {
  request_id: string;
  key_id?: string;
  /** The key's named scope, or `custom` for a key made with `scopes`. */
  scope?: ApiScope | 'custom';
  /** A bearer token's subject (`sub`), for a request made with a token rather than a key. */
  subject?: string;
  /** The team member the key belongs to, or whose external_id is the token's subject, when there is one. */
  user_id?: string;
  /**
   * The resources the caller may read (readableResources), absent when it may read everything: the routes
   * that reach every object (search, changes, events, webhook subscriptions) answer only these.
   */
  readable?: string[];
  /**
   * Set when the client sent an Idempotency-Key: a digest of the API key id and the key, under which the
   * service records the request's outcome so a retry after a lost reply gets that outcome back.
   */
  idempotency_ref?: string;
  /**
   * The channel the request came through: `api` or `mcp` from the gateway, `import` from an import's
   * rows. A batch, capture or merge operation names its own channel (docs/changes.md).
   */
  via?: ChangeVia;
  /**
   * How long the caller waits for the answer, in milliseconds from when it sent the request: the service
   * spends no longer on it (docs/architecture.md). Relative rather than a moment, so clocks need not agree.
   */
  timeout_ms?: number;
}

/** What the gateway sends for one HTTP request: path parameters, query, body, caller. */
export interface RpcRequest<B = unknown, Q = Record<string, unknown>, P = Record<string, string>> {
  ctx: RequestContext;
  params: P;
  query: Q;
  body: B;
}

/** A service-to-service request: the caller's context and a body, no path or query. */
export function internalRequest<B>(ctx: RequestContext, body: B): RpcRequest<B> {
  // The client's Idempotency-Key names the client's request, not the calls a service makes to do it.
  const { idempotency_ref: _ref, ...caller } = ctx;
  return { ctx: caller, params: {}, query: {}, body };
}
