import { RpcRequest } from '@crm/contracts';
import { CRM_RPC } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { inSpan, SpanKind, tracerFor } from '@crm/common';
import type { Context } from '@opentelemetry/api';
import { contextOf, GatewayRequest } from '../http/request-context';

/**
 * Hands an HTTP request to the service that owns it, through the ClientProxy, and returns that service's
 * answer. The gateway adds the caller's identity and nothing else: validation and rules live in the
 * owning service. A failure arrives as a DomainError (the service's own, or 503/501/413 from the
 * transport) and ApiExceptionFilter renders it.
 */
const tracer = tracerFor('gateway');

@Injectable()
export class ServiceForwarder {
  constructor(@Inject(CRM_RPC) private readonly services: ClientProxy) {}

  to(name: string, req: GatewayRequest): Promise<unknown> {
    const request = {
      ctx: contextOf(req),
      params: { ...req.params } as Record<string, string>,
      query: { ...(req.query as Record<string, unknown>) },
      body: req.body ?? null,
    };
    return this.send(name, request, req.traceContext);
  }

  /**
   * The same hand-off for callers that are not a route, e.g. an MCP tool call. The client span's
   * `traceparent` travels in the NATS headers (CrmNatsClient), so the service's span is its child.
   */
  send(name: string, request: RpcRequest, trace?: Context): Promise<unknown> {
    return inSpan(tracer, `rpc ${name}`, { kind: SpanKind.CLIENT, parent: trace }, () =>
      firstValueFrom(this.services.send<unknown>(name, request), { defaultValue: undefined }),
    );
  }
}
