import { BatchRunner, builtInCustomFieldsProviders, BuiltInCustomFieldsService } from '@crm/records';
import { Module } from '@nestjs/common';
import { ContactCompaniesModule } from '../contact-companies/contact-companies.module';
import { ContactsFieldReferences } from './contacts-field-references';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';
import { ObjectRecordsController, ObjectTypesController } from './objects.controller';

/**
 * Contacts, companies, activities and tasks keep their custom fields through the BuiltInCustomFieldsService
 * exported here, and run their batch writes with its BatchRunner.
 */
@Module({
  imports: [ContactCompaniesModule],
  controllers: [ObjectTypesController, ObjectRecordsController],
  providers: [...builtInCustomFieldsProviders('contacts', ContactsFieldReferences), ObjectTypesService, ObjectRecordsService, BatchRunner],
  exports: [BuiltInCustomFieldsService, ObjectTypesService, BatchRunner, ContactCompaniesModule],
})
export class ObjectsModule {}
