import { contextFrom, inSpan, SpanKind, tracerFor } from '@crm/common';
import { RequestStep, ServiceRequest } from './service-request.interceptor';

/**
 * The server span of every request a service answers over NATS: a child of the `traceparent` the
 * caller's client span put in the message headers. The handler runs inside it, so the events it
 * records in the outbox carry it on to the relay, the event log and webhook delivery.
 */
export class RpcTracing implements RequestStep {
  private readonly tracer;

  constructor(service: string) {
    this.tracer = tracerFor(service);
  }

  around({ pattern, nats }: ServiceRequest, next: () => Promise<unknown>): Promise<unknown> {
    const parent = contextFrom(nats.getHeaders()?.get('traceparent'));
    return inSpan(this.tracer, `rpc ${pattern}`, { kind: SpanKind.SERVER, parent }, next);
  }
}
