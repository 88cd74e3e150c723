import { Ops, ResolveContactsDto, ResolveContactsReply } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ContactsDirectoryService } from './contacts-directory.service';

/** Ops.contactsInternal.resolve: other services check contact, company and user ids and name them. */
@Controller()
export class ContactsDirectoryController {
  constructor(private readonly directory: ContactsDirectoryService) {}

  @Handles(Ops.contactsInternal.resolve)
  async resolve(@Payload('body') body: ResolveContactsDto): Promise<ResolveContactsReply> {
    return this.directory.resolve(body);
  }
}
