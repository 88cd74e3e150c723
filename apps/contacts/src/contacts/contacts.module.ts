import { Module } from '@nestjs/common';
import { ContactCompaniesModule } from '../contact-companies/contact-companies.module';
import { DealDirectory } from '@crm/records';
import { ContactsBatchWriter } from './contacts.batch';
import { ObjectsModule } from '../objects/objects.module';
import { WorkLinksModule } from '../work-links/work-links.module';
import { SuppressionsModule } from '../privacy/suppressions.module';
import { ContactsDirectoryController } from './contacts-directory.controller';
import { ContactsDirectoryService } from './contacts-directory.service';
import { ContactsController } from './contacts.controller';
import { ContactsService } from './contacts.service';

@Module({
  imports: [ObjectsModule, WorkLinksModule, ContactCompaniesModule, SuppressionsModule],
  controllers: [ContactsController, ContactsDirectoryController],
  providers: [ContactsService, ContactsDirectoryService, ContactsBatchWriter, DealDirectory],
  exports: [ContactsService],
})
export class ContactsModule {}
