import { EventQueryDto, ListEventsQuery, Ops } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Handles(Ops.events.list)
  list(@Payload('query') query: ListEventsQuery) {
    return this.events.list(query);
  }

  @Handles(Ops.events.query)
  query(@Payload('body') body: EventQueryDto) {
    return this.events.query(body);
  }
}
