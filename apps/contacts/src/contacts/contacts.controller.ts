import { SortablePageQuery } from '@crm/common';
import { MergeContactsDto, Ops, RequestContext, UpdateContactDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { recordsController } from '@crm/records';
import { Payload } from '@nestjs/microservices';
import { ContactsBatchWriter } from './contacts.batch';
import { ContactsService } from './contacts.service';

export class ContactsController extends recordsController(ContactsService, ContactsBatchWriter, Ops.contacts) {
  @Handles(Ops.contacts.get)
  async get(@Payload('params') { id }: { id: string }) {
    return this.records.get(id);
  }

  @Handles(Ops.contacts.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateContactDto) {
    return this.records.update(ctx, id, body);
  }

  @Handles(Ops.contacts.merge)
  async merge(@Payload('ctx') ctx: RequestContext, @Payload('body') body: MergeContactsDto) {
    return this.records.merge(ctx, body);
  }

  @Handles(Ops.contacts.deals)
  listDeals(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
    return this.records.listDeals(ctx, id, query);
  }
}
