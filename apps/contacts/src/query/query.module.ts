import { Module } from '@nestjs/common';
import { ObjectsModule } from '../objects/objects.module';
import { QueryCatalogs } from './query-catalogs';
import { QueryController } from './query.controller';

/** Queries over contacts, companies, users, activities and tasks; custom field definitions come from ObjectsModule. */
@Module({ imports: [ObjectsModule], controllers: [QueryController], providers: [QueryCatalogs] })
export class QueryModule {}
