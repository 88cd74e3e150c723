import { contextFrom, SpanKind, tracerFor } from '@crm/common';
import { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { NatsContext } from '@nestjs/microservices';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { finalize, Observable, tap } from 'rxjs';

/**
 * The server span of every request a service answers over NATS: a child of the `traceparent` the
 * caller's client span put in the message headers. The handler runs inside it, so the events it
 * records in the outbox carry it on to the relay, the event log and webhook delivery.
 */
export class RpcTracingInterceptor implements NestInterceptor {
  private readonly tracer;

  constructor(
    service: string,
    private readonly namespace: string,
  ) {
    this.tracer = tracerFor(service);
  }

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'rpc') return next.handle();
    const nats = execution.switchToRpc().getContext<NatsContext>();
    const pattern = nats.getSubject().slice(`${this.namespace}.rpc.`.length);
    const parent = contextFrom(nats.getHeaders()?.get('traceparent'));
    const span = this.tracer.startSpan(`rpc ${pattern}`, { kind: SpanKind.SERVER }, parent);
    // Nest binds the handler to the async context current when next.handle() is called.
    return context.with(trace.setSpan(parent, span), () => next.handle()).pipe(
      tap({ error: (err: Error) => span.setStatus({ code: SpanStatusCode.ERROR, message: err.message }) }),
      finalize(() => span.end()),
    );
  }
}
