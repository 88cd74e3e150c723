import { DomainError, ErrorCode } from '@crm/common';
import { RpcRequest } from '@crm/contracts';
import { RpcClient } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { contextOf, GatewayRequest } from '../http/request-context';

/**
 * Hands an HTTP request to the service that owns it and returns that service's answer. The gateway
 * adds the caller's identity and nothing else: validation and rules live in the owning service.
 */
@Injectable()
export class ServiceForwarder {
  constructor(private readonly rpc: RpcClient) {}

  async to(name: string, req: GatewayRequest): Promise<unknown> {
    const request: RpcRequest = {
      ctx: contextOf(req),
      params: { ...req.params } as Record<string, string>,
      query: { ...(req.query as Record<string, unknown>) },
      body: req.body ?? null,
    };
    const payload = this.rpc.encode(request);
    if (payload.byteLength > this.rpc.maxPayload) {
      throw new DomainError(ErrorCode.PayloadTooLarge, `Request exceeds the ${this.rpc.maxPayload} byte limit.`);
    }
    const reply = await this.rpc.call(name, payload);
    if (!reply.ok) throw new DomainError(reply.error.code, reply.error.message, reply.error.details);
    return reply.body;
  }
}
