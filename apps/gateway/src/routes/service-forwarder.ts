import { AnyOperation, ReplyOf } from '@crm/contracts';
import { RawJson, RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { hiddenSummaryTypes, redactSummaries } from '../http/related-summaries';
import { contextOf, GatewayRequest } from '../http/request-context';

/**
 * Hands an HTTP request to the service that answers its operation and returns that service's answer. The
 * gateway adds the caller's identity and nothing else: validation and rules live in the owning service. A
 * failure arrives as a DomainError (the service's own, or 503/501/413 from the transport) and
 * ApiExceptionFilter renders it. A successful answer arrives as the service's JSON, unparsed (RawJson),
 * and is written to the response as it is (see `sendsRawJson`), unless it names related records the
 * caller may not read: then their names are taken out first (docs/api.md, "Related reads").
 */
@Injectable()
export class ServiceForwarder {
  constructor(private readonly rpc: RpcCaller) {}

  to<O extends AnyOperation>(op: O, req: GatewayRequest): Promise<ReplyOf<O> | RawJson> {
    const params = { ...(req.params as Record<string, string>) };
    const target = op.routeBy?.(params) ?? op;
    const answer = this.rpc.pass(
      target,
      contextOf(req),
      { params, query: { ...(req.query as Record<string, unknown>) }, body: req.body ?? null },
      { trace: req.traceContext },
    );
    // Most keys may read every object: their answers go out as the service wrote them, with no step added.
    const hidden = req.principal && hiddenSummaryTypes(req.principal.permissions);
    if (!hidden) return answer;
    return answer.then((reply) =>
      reply === undefined ? reply : redactSummaries(reply instanceof RawJson ? (JSON.parse(reply.json) as ReplyOf<O>) : reply, hidden),
    );
  }
}
