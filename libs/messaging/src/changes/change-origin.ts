import { ChangeOrigin, ChangeVia, RequestContext } from '@crm/contracts';
import { AsyncLocalStorage } from 'async_hooks';

/**
 * The origin of the work in progress: set around every request a service handles (the ChangeOrigin step),
 * around an import's rows and a background job's run. Every event and change entry recorded inside it
 * carries it, so no write path passes it along by hand.
 */
export const changeOriginScope = new AsyncLocalStorage<ChangeOrigin>();

/**
 * Who asked: the team member of the key or bearer token when there is one, else the key or the token's
 * subject; neither means the system.
 */
export function originOf(ctx: RequestContext, via: ChangeVia = ctx.via ?? (ctx.key_id || ctx.subject ? 'api' : 'system')): ChangeOrigin {
  const actor = ctx.user_id
    ? { type: 'user' as const, id: ctx.user_id }
    : ctx.key_id
      ? { type: 'api_key' as const, id: ctx.key_id }
      : ctx.subject
        ? { type: 'subject' as const, id: ctx.subject }
        : { type: 'system' as const, id: null };
  return { actor, via, request_id: ctx.request_id ?? null };
}

/** What a service does on its own: `job` names the part that acted (`stale_deals`, a consumer's name). */
export function systemOrigin(job: string): ChangeOrigin {
  return { actor: { type: 'system', id: job }, via: 'system', request_id: null };
}

/** The origin in scope, or the system acting as `fallbackJob` outside any request or job. */
export function currentOrigin(fallbackJob: string): ChangeOrigin {
  return changeOriginScope.getStore() ?? systemOrigin(fallbackJob);
}

export function withOrigin<T>(origin: ChangeOrigin, work: () => T): T {
  return changeOriginScope.run(origin, work);
}

/**
 * The channel of an operation that names its own (a batch, a capture, a merge) replaces `api`; a change an
 * agent makes through MCP stays `mcp`, and an import's stays `import`, whatever operation carries it.
 */
export function channelFor(requested: ChangeVia | undefined, operationVia: ChangeVia | undefined): ChangeVia | undefined {
  if (!operationVia) return requested;
  return requested === undefined || requested === 'api' ? operationVia : requested;
}
