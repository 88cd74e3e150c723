import { Module } from '@nestjs/common';
import { ContactsDirectoryHandler } from './contacts-directory.handler';
import { ContactsHandler } from './contacts.handler';
import { ContactsService } from './contacts.service';

@Module({
  providers: [ContactsService, ContactsHandler, ContactsDirectoryHandler],
  exports: [ContactsService],
})
export class ContactsModule {}
