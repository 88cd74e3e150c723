import { Module } from '@nestjs/common';
import { DealEventsConsumer } from './activity/deal-events.consumer';
import { ContactsDirectory } from './deals/contacts-directory';
import { DealStageMover } from './deals/deal-stage-mover';
import { DealsHandler } from './deals/deals.handler';
import { DealsService } from './deals/deals.service';
import { ContactLinksService } from './internal/contact-links.service';
import { DealsInternalHandler } from './internal/internal.handler';
import { PipelinesHandler } from './pipelines/pipelines.handler';
import { PipelinesService } from './pipelines/pipelines.service';
import { StaleDealsJob } from './stale/stale-deals.job';

@Module({
  providers: [
    ContactsDirectory,
    DealStageMover,
    DealsService,
    DealsHandler,
    PipelinesService,
    PipelinesHandler,
    ContactLinksService,
    DealsInternalHandler,
    DealEventsConsumer,
    StaleDealsJob,
  ],
})
export class DealsModule {}
