import { AnyOperation, ReplyOf } from '@crm/contracts';
import { RawJson, RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { contextOf, GatewayRequest } from '../http/request-context';

/**
 * Hands an HTTP request to the service that answers its operation and returns that service's answer. The
 * gateway adds the caller's identity and nothing else: validation and rules live in the owning service. A
 * failure arrives as a DomainError (the service's own, or 503/501/413 from the transport) and
 * ApiExceptionFilter renders it. A successful answer arrives as the service's JSON, unparsed (RawJson),
 * and is written to the response as it is (see `sendsRawJson`).
 */
@Injectable()
export class ServiceForwarder {
  constructor(private readonly rpc: RpcCaller) {}

  to<O extends AnyOperation>(op: O, req: GatewayRequest): Promise<ReplyOf<O> | RawJson> {
    const params = { ...(req.params as Record<string, string>) };
    const target = op.routeBy?.(params) ?? op;
    return this.rpc.pass(
      target,
      contextOf(req),
      { params, query: { ...(req.query as Record<string, unknown>) }, body: req.body ?? null },
      { trace: req.traceContext },
    );
  }
}
