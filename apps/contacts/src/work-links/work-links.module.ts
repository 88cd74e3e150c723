import { Global, Module } from '@nestjs/common';
import { DealEventsConsumer } from './deal-events.consumer';
import { WorkLinks } from './work-links.service';

@Global()
@Module({ providers: [WorkLinks, DealEventsConsumer], exports: [WorkLinks] })
export class WorkLinksModule {}
