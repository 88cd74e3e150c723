import { BatchRunner, builtInCustomFieldsProviders, catalogQueriesProvider, recordQueriesController } from '@crm/records';
import { Module } from '@nestjs/common';
import { CustomFieldsController } from './custom-fields/custom-fields.controller';
import { DealsFieldReferences } from './custom-fields/deals-field-references';
import { DealContacts } from './deal-contacts/deal-contacts';
import { DealContactsController } from './deal-contacts/deal-contacts.controller';
import { DealEventsConsumer } from './activity/deal-events.consumer';
import { ContactsDirectory } from './deals/contacts-directory';
import { DealStageMover } from './deals/deal-stage-mover';
import { DealsBatchWriter } from './deals/deals.batch';
import { DealViews } from './deals/deal-views';
import { DealsController } from './deals/deals.controller';
import { DealsCatalogs } from './deals/deals-catalogs';
import { DealsService } from './deals/deals.service';
import { DEALS_SETTINGS } from './deals.settings';
import { LineItemsController } from './line-items/line-items.controller';
import { LineItemsService } from './line-items/line-items.service';
import { ProductsBatchWriter } from './products/products.batch';
import { ProductsController } from './products/products.controller';
import { ProductsService } from './products/products.service';
import { DealImportsService } from './imports/deal-imports.service';
import { ContactLinksService } from './internal/contact-links.service';
import { DealsInternalController } from './internal/internal.controller';
import { PipelineReportService } from './pipelines/pipeline-report.service';
import { PipelinesController } from './pipelines/pipelines.controller';
import { PipelinesService } from './pipelines/pipelines.service';
import { StaleDealsJob } from './stale/stale-deals.job';

@Module({
  controllers: [
    DealsController,
    ProductsController,
    LineItemsController,
    recordQueriesController('deals', DealsCatalogs),
    DealContactsController,
    PipelinesController,
    DealsInternalController,
    CustomFieldsController,
  ],
  providers: [
    ...builtInCustomFieldsProviders('deals', DealsFieldReferences),
    ContactsDirectory,
    DealContacts,
    DealStageMover,
    DealsService,
    DealsCatalogs,
    catalogQueriesProvider(DEALS_SETTINGS),
    DealsBatchWriter,
    ProductsService,
    ProductsBatchWriter,
    LineItemsService,
    DealViews,
    BatchRunner,
    PipelinesService,
    PipelineReportService,
    ContactLinksService,
    DealImportsService,
    DealEventsConsumer,
    StaleDealsJob,
  ],
})
export class DealsModule {}
