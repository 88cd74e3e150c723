import { Module } from '@nestjs/common';
import { EventLogWriter } from './event-log.writer';
import { EventRetention } from './event-retention';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

@Module({
  controllers: [EventsController],
  providers: [EventLogWriter, EventsService, EventRetention],
})
export class EventLogModule {}
