import { Global, Module } from '@nestjs/common';
import { FieldEnforcer } from './field-enforcer';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';
import { ObjectRecordsController, ObjectTypesController } from './objects.controller';

/** Global: contacts, companies, activities and tasks check their custom fields with the same enforcer. */
@Global()
@Module({
  controllers: [ObjectTypesController, ObjectRecordsController], providers: [FieldEnforcer, ObjectTypesService, ObjectRecordsService],
  exports: [FieldEnforcer, ObjectTypesService],
})
export class ObjectsModule {}
