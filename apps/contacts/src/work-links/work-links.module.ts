import { Module } from '@nestjs/common';
import { DealEventsConsumer } from './deal-events.consumer';
import { WorkLinks } from './work-links.service';

@Module({ providers: [WorkLinks, DealEventsConsumer], exports: [WorkLinks] })
export class WorkLinksModule {}
