import { inSpan, SpanKind, tracerFor } from '@crm/common';
import { AnyOperation, BodyOf, ParamsOf, QueryOf, ReplyOf, RequestContext, RpcRequest } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import type { Context } from '@opentelemetry/api';
import { firstValueFrom, timeout } from 'rxjs';
import { CRM_RPC, CrmNatsClient } from './crm-nats.client';
import { timeLeftMs } from './request-deadline';
import { serviceUnavailable } from './rpc-errors';
import { RawJson } from './split-replies';
import { changeOriginScope } from '../changes/change-origin';

const tracer = tracerFor('rpc');

function withoutIdempotencyKey({ idempotency_ref: _ref, ...caller }: RequestContext): RequestContext {
  return caller;
}

/** The parts of a request a caller supplies; the caller's context is passed beside them. */
export interface CallInput<O extends AnyOperation> {
  params?: ParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
}

export interface CallOptions {
  /** The span the call belongs to, when it is not the active one (the gateway's request span). */
  trace?: Context;
  /** Wait less than the client's deadline (RPC_TIMEOUT_MS) and the time left of the request in progress. */
  timeoutMs?: number;
}

/**
 * Asks the service that answers an operation, and resolves with the reply the operation declares. Every
 * failure arrives as a DomainError (the callee's own, or 503/501/413 from the transport; see
 * CrmNatsClient). A service-to-service operation does not carry the client's Idempotency-Key: the key
 * names the client's request, not the calls a service makes to do it.
 *
 * A call waits no longer than the request it is made for has left (see withDeadline), and tells the
 * service how long it waits (`ctx.timeout_ms`), so that work nobody waits for any more is not done.
 */
@Injectable()
export class RpcCaller {
  constructor(@Inject(CRM_RPC) private readonly client: ClientProxy) {}

  call<O extends AnyOperation>(op: O, ctx: RequestContext, input: CallInput<O> = {}, options: CallOptions = {}): Promise<ReplyOf<O>> {
    return this.ask(op, ctx, input, options, false) as Promise<ReplyOf<O>>;
  }

  /**
   * `call`, for a caller that hands the reply on unchanged (the gateway's forwarded routes): a successful
   * reply arrives as RawJson, the service's JSON unparsed, where the transport allows (CrmNatsClient).
   */
  pass<O extends AnyOperation>(op: O, ctx: RequestContext, input: CallInput<O> = {}, options: CallOptions = {}): Promise<ReplyOf<O> | RawJson> {
    return this.ask(op, ctx, input, options, true) as Promise<ReplyOf<O> | RawJson>;
  }

  private ask<O extends AnyOperation>(op: O, ctx: RequestContext, input: CallInput<O>, options: CallOptions, passing: boolean): Promise<unknown> {
    // A call made while handling a batch, an import or a merge carries that channel on to the next service.
    const via = changeOriginScope.getStore()?.via ?? ctx.via;
    const waitMs = this.waitMs(options.timeoutMs);
    if (waitMs !== undefined && waitMs <= 0)
      return Promise.reject(serviceUnavailable(`The request's time ran out before the ${op.service} service was asked; try again shortly.`));
    const request: RpcRequest = {
      ctx: { ...(op.http ? ctx : withoutIdempotencyKey(ctx)), ...(via ? { via } : {}), ...(waitMs !== undefined ? { timeout_ms: waitMs } : {}) },
      params: (input.params ?? {}) as Record<string, string>,
      query: (input.query ?? {}) as Record<string, unknown>,
      body: input.body ?? null,
    };
    return inSpan(tracer, `rpc ${op.name}`, { kind: SpanKind.CLIENT, parent: options.trace }, () => {
      const reply =
        passing && this.client instanceof CrmNatsClient ? this.client.sendPassingThrough(op.name, request) : this.client.send<unknown>(op.name, request);
      // Our client keeps to the wait the request names; another ClientProxy (a test's) gets a timer.
      const bounded = waitMs !== undefined && !(this.client instanceof CrmNatsClient) ? reply.pipe(timeout(waitMs)) : reply;
      return firstValueFrom(bounded, { defaultValue: undefined });
    });
  }

  /** The shortest of the client's deadline, the call's own and the time the request in progress has left; whole milliseconds. */
  private waitMs(callTimeoutMs: number | undefined): number | undefined {
    const limits = [this.client instanceof CrmNatsClient ? this.client.timeoutMs : undefined, callTimeoutMs, timeLeftMs()].filter(
      (ms): ms is number => ms !== undefined,
    );
    return limits.length ? Math.floor(Math.min(...limits)) : undefined;
  }
}
