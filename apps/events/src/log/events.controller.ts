import { InputPipe } from '@crm/common';
import { EventsRpc, ListEventsQuery } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @MessagePattern(EventsRpc.List)
  list(@Payload('query', new InputPipe(ListEventsQuery, 'query')) query: ListEventsQuery) {
    return this.events.list(query);
  }
}
