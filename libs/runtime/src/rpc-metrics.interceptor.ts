import { DomainError, ErrorCode } from '@crm/common';
import { MessagingMetrics } from '@crm/messaging';
import { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { NatsContext } from '@nestjs/microservices';
import { Observable, tap } from 'rxjs';

/** Rate, errors and duration of every request a service handles over NATS, by request name. */
export class RpcMetricsInterceptor implements NestInterceptor {
  constructor(
    private readonly metrics: MessagingMetrics,
    private readonly namespace: string,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const subject = context.switchToRpc().getContext<NatsContext>().getSubject();
    // `<namespace>.rpc.contacts.contacts.get` -> `contacts.contacts.get`: ids travel in the payload, so
    // the label set stays as small as the list of operations.
    const pattern = subject.slice(`${this.namespace}.rpc.`.length);
    const end = this.metrics.rpcDuration.startTimer({ pattern });
    return next.handle().pipe(
      tap({
        complete: () => end({ outcome: 'ok' }),
        error: (err: unknown) => end({ outcome: err instanceof DomainError ? err.code : ErrorCode.Internal }),
      }),
    );
  }
}
