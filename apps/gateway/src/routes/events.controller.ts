import { ApiPage } from '../openapi/api-docs.decorators';
import { EventView, EventsRpc, ListEventsQuery } from '@crm/contracts';
import { Controller, Get, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('events')
export class EventsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Get()
  @Scopes('read')
  @ApiPage(EventView, { summary: 'Read the event log in order', query: ListEventsQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(EventsRpc.List, req);
  }
}
