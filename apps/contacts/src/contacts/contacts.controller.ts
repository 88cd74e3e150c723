import { SortablePageQuery } from '@crm/common';
import { BatchWriteDto, CreateContactDto, ListContactsQuery, MergeContactsDto, Ops, RequestContext, UpdateContactDto } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ContactsService } from './contacts.service';
import { BatchRunner, Handles } from '@crm/runtime';
import { ContactsBatchWriter } from './contacts.batch';

@Controller()
export class ContactsController {
  constructor(
    private readonly contacts: ContactsService,
    private readonly batches: BatchRunner,
    private readonly batchWriter: ContactsBatchWriter,
  ) {}

  @Handles(Ops.contacts.batch)
  batch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: BatchWriteDto) {
    return this.batches.run(ctx, body, this.batchWriter);
  }

  @Handles(Ops.contacts.create)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateContactDto) {
    return { data: await this.contacts.create(ctx, body) };
  }

  @Handles(Ops.contacts.list)
  list(@Payload('query') query: ListContactsQuery) {
    return this.contacts.list(query);
  }

  @Handles(Ops.contacts.get)
  async get(@Payload('params') { id }: { id: string }) {
    return this.contacts.get(id);
  }

  @Handles(Ops.contacts.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateContactDto) {
    return this.contacts.update(ctx, id, body);
  }

  @Handles(Ops.contacts.remove)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    await this.contacts.remove(ctx, id);
  }

  @Handles(Ops.contacts.merge)
  async merge(@Payload('ctx') ctx: RequestContext, @Payload('body') body: MergeContactsDto) {
    return this.contacts.merge(ctx, body);
  }

  @Handles(Ops.contacts.deals)
  listDeals(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
    return this.contacts.listDeals(ctx, id, query);
  }
}
