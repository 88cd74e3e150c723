import { AnyOperation } from '@crm/contracts';
import { Controller, Inject, Req, Type } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { Route } from './route.decorator';
import { ServiceForwarder } from './service-forwarder';

/**
 * The gateway controller of one group of the operation table: a method per operation with an HTTP route,
 * named by its key (so `contacts.create` is the OpenAPI operation `contacts_create`), that forwards the
 * request to the operation's service. Custom routes are left to a controller of their own.
 */
export function forwardingController(group: string, operations: Record<string, AnyOperation>): Type {
  @Controller()
  class ForwardingController {
    constructor(@Inject(ServiceForwarder) readonly forward: ServiceForwarder) {}
  }
  Object.defineProperty(ForwardingController, 'name', { value: `${group[0].toUpperCase()}${group.slice(1)}Controller` });

  for (const [key, op] of Object.entries(operations)) {
    if (!op.http || op.http.custom) continue;
    const handler =
      op.reply.kind === 'none'
        ? async function (this: ForwardingController, req: GatewayRequest): Promise<void> {
            await this.forward.to(op, req);
          }
        : function (this: ForwardingController, req: GatewayRequest): Promise<unknown> {
            return this.forward.to(op, req);
          };
    Object.defineProperty(ForwardingController.prototype, key, { value: handler, writable: true, configurable: true });
    Req()(ForwardingController.prototype, key, 0);
    Route(op)(ForwardingController.prototype, key, Object.getOwnPropertyDescriptor(ForwardingController.prototype, key)!);
  }
  return ForwardingController;
}
