import { RpcRequest } from '@crm/contracts';
import { CRM_RPC } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { contextOf, GatewayRequest } from '../http/request-context';

/**
 * Hands an HTTP request to the service that owns it, through the ClientProxy, and returns that service's
 * answer. The gateway adds the caller's identity and nothing else: validation and rules live in the
 * owning service. A failure arrives as a DomainError (the service's own, or 503/501/413 from the
 * transport) and ApiExceptionFilter renders it.
 */
@Injectable()
export class ServiceForwarder {
  constructor(@Inject(CRM_RPC) private readonly services: ClientProxy) {}

  to(name: string, req: GatewayRequest): Promise<unknown> {
    return this.send(name, {
      ctx: contextOf(req),
      params: { ...req.params } as Record<string, string>,
      query: { ...(req.query as Record<string, unknown>) },
      body: req.body ?? null,
    });
  }

  /** The same hand-off for callers that are not a route, e.g. an MCP tool call. */
  send(name: string, request: RpcRequest): Promise<unknown> {
    return firstValueFrom(this.services.send<unknown>(name, request), { defaultValue: undefined });
  }
}
