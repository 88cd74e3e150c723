import { Global, Module } from '@nestjs/common';
import { FieldEnforcer } from './field-enforcer';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';
import { ObjectRecordsHandler, ObjectTypesHandler } from './objects.handler';

/** Global: contacts and companies check their custom fields with the same enforcer. */
@Global()
@Module({
  providers: [FieldEnforcer, ObjectTypesService, ObjectRecordsService, ObjectTypesHandler, ObjectRecordsHandler],
  exports: [FieldEnforcer, ObjectTypesService],
})
export class ObjectsModule {}
