import { Module } from '@nestjs/common';
import { ContactsDirectoryController } from './contacts-directory.controller';
import { ContactsController } from './contacts.controller';
import { ContactsService } from './contacts.service';

@Module({
  controllers: [ContactsController, ContactsDirectoryController], providers: [ContactsService],
  exports: [ContactsService],
})
export class ContactsModule {}
