import { builtInCustomFieldsProviders, BuiltInCustomFieldsService } from '@crm/runtime';
import { Module } from '@nestjs/common';
import { ContactsFieldReferences } from './contacts-field-references';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';
import { ObjectRecordsController, ObjectTypesController } from './objects.controller';

/** Contacts, companies, activities and tasks keep their custom fields through the BuiltInCustomFieldsService exported here. */
@Module({
  controllers: [ObjectTypesController, ObjectRecordsController],
  providers: [...builtInCustomFieldsProviders('contacts', ContactsFieldReferences), ObjectTypesService, ObjectRecordsService],
  exports: [BuiltInCustomFieldsService, ObjectTypesService],
})
export class ObjectsModule {}
