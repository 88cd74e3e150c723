import { EventQueryDto, ListEventsQuery, Ops, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Handles(Ops.events.list)
  list(@Payload('ctx') ctx: RequestContext, @Payload('query') query: ListEventsQuery) {
    return this.events.list(ctx, query);
  }

  @Handles(Ops.events.query)
  query(@Payload('ctx') ctx: RequestContext, @Payload('body') body: EventQueryDto) {
    return this.events.query(ctx, body);
  }
}
