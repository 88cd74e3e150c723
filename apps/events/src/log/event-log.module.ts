import { Module } from '@nestjs/common';
import { EventLogWriter } from './event-log.writer';
import { EventRetention } from './event-retention';
import { EventsHandler } from './events.handler';
import { EventsService } from './events.service';

@Module({
  providers: [EventLogWriter, EventsService, EventsHandler, EventRetention],
})
export class EventLogModule {}
