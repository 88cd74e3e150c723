import { catalogQueriesProvider, recordQueriesController } from '@crm/records';
import { Module } from '@nestjs/common';
import { CONTACTS_SETTINGS } from '../contacts.settings';
import { ObjectsModule } from '../objects/objects.module';
import { QueryCatalogs } from './query-catalogs';
import { QueryController } from './query.controller';

/** Queries over contacts, companies, users, activities and tasks; custom field definitions come from ObjectsModule. */
@Module({
  imports: [ObjectsModule],
  controllers: [recordQueriesController('contacts', QueryCatalogs), QueryController],
  providers: [QueryCatalogs, catalogQueriesProvider(CONTACTS_SETTINGS)],
})
export class QueryModule {}
