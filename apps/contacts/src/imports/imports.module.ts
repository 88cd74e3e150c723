import { Module } from '@nestjs/common';
import { CompaniesModule } from '../companies/companies.module';
import { ContactsModule } from '../contacts/contacts.module';
import { ObjectsModule } from '../objects/objects.module';
import { ImportRunner } from './import-runner';
import { ImportsController } from './imports.controller';
import { ImportsService } from './imports.service';

@Module({ imports: [ContactsModule, CompaniesModule, ObjectsModule], controllers: [ImportsController], providers: [ImportsService, ImportRunner] })
export class ImportsModule {}
