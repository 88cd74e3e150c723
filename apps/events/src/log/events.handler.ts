import { validateInput } from '@crm/common';
import { EventsRpc, RpcRequest } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { ListEventsQuery } from './dto/list-events.query';
import { EventsService } from './events.service';

@Injectable()
export class EventsHandler {
  constructor(private readonly events: EventsService) {}

  @RpcHandler(EventsRpc.List)
  list(req: RpcRequest) {
    return this.events.list(validateInput(ListEventsQuery, req.query, 'query'));
  }
}
