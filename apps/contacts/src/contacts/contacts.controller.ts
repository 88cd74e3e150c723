import { InputPipe, PageQuery } from '@crm/common';
import { ContactsRpc, CreateContactDto, ListContactsQuery, MergeContactsDto, RequestContext, UpdateContactDto } from '@crm/contracts';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ContactsService } from './contacts.service';
import { SoftWarningsInterceptor } from '@crm/runtime';

@Controller()
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @MessagePattern(ContactsRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(CreateContactDto)) body: CreateContactDto,
  ) {
    return { data: await this.contacts.create(ctx, body) };
  }

  @MessagePattern(ContactsRpc.List)
  list(@Payload('query', new InputPipe(ListContactsQuery, 'query')) query: ListContactsQuery) {
    return this.contacts.list(query);
  }

  @MessagePattern(ContactsRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return this.contacts.get(id);
  }

  @MessagePattern(ContactsRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateContactDto)) body: UpdateContactDto,
  ) {
    return this.contacts.update(ctx, id, body);
  }

  @MessagePattern(ContactsRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.contacts.remove(id);
  }

  @MessagePattern(ContactsRpc.Merge)
  async merge(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(MergeContactsDto)) body: MergeContactsDto,
  ) {
    return this.contacts.merge(ctx, body);
  }

  @MessagePattern(ContactsRpc.ListDeals)
  listDeals(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.contacts.listDeals(ctx, id, query);
  }
}
