import { PageQuery, validateInput } from '@crm/common';
import { ContactsRpc, CreateContactDto, ListContactsQuery, MergeContactsDto, RpcRequest, UpdateContactDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { presentContactSummary, presentContactWithIncluded } from './contact.presenter';
import { ContactsService } from './contacts.service';

@Injectable()
export class ContactsHandler {
  constructor(private readonly contacts: ContactsService) {}

  @RpcHandler(ContactsRpc.Create)
  async create(req: RpcRequest) {
    const contact = await this.contacts.create(req.ctx, validateInput(CreateContactDto, req.body));
    return { data: presentContactSummary(contact) };
  }

  @RpcHandler(ContactsRpc.List)
  list(req: RpcRequest) {
    return this.contacts.list(validateInput(ListContactsQuery, req.query, 'query'));
  }

  @RpcHandler(ContactsRpc.Get)
  async get(req: RpcRequest) {
    const { contact, company } = await this.contacts.get(req.params.id);
    return presentContactWithIncluded(contact, company);
  }

  @RpcHandler(ContactsRpc.Update)
  async update(req: RpcRequest) {
    const { contact, company } = await this.contacts.update(req.ctx, req.params.id, validateInput(UpdateContactDto, req.body));
    return presentContactWithIncluded(contact, company);
  }

  @RpcHandler(ContactsRpc.Delete)
  async remove(req: RpcRequest) {
    await this.contacts.remove(req.params.id);
  }

  @RpcHandler(ContactsRpc.Merge)
  async merge(req: RpcRequest) {
    const { contact, company } = await this.contacts.merge(req.ctx, validateInput(MergeContactsDto, req.body));
    return presentContactWithIncluded(contact, company);
  }

  @RpcHandler(ContactsRpc.ListDeals)
  listDeals(req: RpcRequest) {
    return this.contacts.listDeals(req.ctx, req.params.id, validateInput(PageQuery, req.query, 'query'));
  }
}
