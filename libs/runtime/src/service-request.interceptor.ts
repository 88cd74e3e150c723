import type { RpcRequest } from '@crm/contracts';
import { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { NatsContext } from '@nestjs/microservices';
import { from, lastValueFrom, Observable } from 'rxjs';

/** What each step around a request sees of it. */
export interface ServiceRequest {
  /** The request name, e.g. `contacts.contacts.get` (the subject without `<namespace>.rpc.`). */
  pattern: string;
  nats: NatsContext;
  payload: Partial<RpcRequest> | undefined;
  execution: ExecutionContext;
}

/** One concern wrapped around every request a service answers over NATS; `next` runs the rest, then the handler. */
export interface RequestStep {
  around(request: ServiceRequest, next: () => Promise<unknown>): Promise<unknown>;
}

/**
 * Runs the steps every request a service answers over NATS needs, outermost first, around its handler:
 * its deadline, its trace span, its metrics, its at-most-once outcome, the origin its changes record. One interceptor
 * rather than one per concern: each of Nest's interceptor layers costs an rxjs pipeline and an
 * `AsyncResource.bind` per request, which a profile of the contacts service put at a tenth of its CPU
 * for a single-record read (docs/benchmarks.md). A step is a plain async function around the next.
 */
export class ServiceRequestInterceptor implements NestInterceptor {
  private readonly prefix: string;

  constructor(
    namespace: string,
    private readonly steps: RequestStep[],
  ) {
    this.prefix = `${namespace}.rpc.`;
  }

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'rpc') return next.handle();
    const rpc = execution.switchToRpc();
    const nats = rpc.getContext<NatsContext>();
    const request: ServiceRequest = { pattern: nats.getSubject().slice(this.prefix.length), nats, payload: rpc.getData(), execution };
    // handle() is called innermost, inside every step's scope: Nest binds the handler to the async context current then.
    const handler = () => lastValueFrom(next.handle(), { defaultValue: undefined });
    const run = this.steps.reduceRight<() => Promise<unknown>>((inner, step) => () => step.around(request, inner), handler);
    return from(run());
  }
}
