import { catalogQueriesProvider } from '@crm/records';
import { Module } from '@nestjs/common';
import { CONTACTS_SETTINGS } from '../contacts.settings';
import { ObjectsModule } from '../objects/objects.module';
import { QueryCatalogs } from './query-catalogs';
import { AggregateController } from './aggregate.controller';
import { QueryController } from './query.controller';
import { RecordQueryService } from './query.service';

/** Queries over contacts, companies, users, activities and tasks; custom field definitions come from ObjectsModule. */
@Module({
  imports: [ObjectsModule],
  controllers: [QueryController, AggregateController],
  providers: [QueryCatalogs, RecordQueryService, catalogQueriesProvider(CONTACTS_SETTINGS)],
})
export class QueryModule {}
