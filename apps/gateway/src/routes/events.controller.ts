import { EventsRpc } from '@crm/contracts';
import { Controller, Get, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('events')
export class EventsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(EventsRpc.List, req);
  }
}
