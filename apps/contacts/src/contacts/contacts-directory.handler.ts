import { IdPrefix, isId, validateInput } from '@crm/common';
import { ContactsInternalRpc, ResolveContactsDto, ResolveContactsReply, RpcRequest } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { Company } from '../companies/company.entity';
import { Contact } from './contact.entity';
import { contactDisplayName } from './contact.presenter';

/** ContactsInternalRpc.Resolve: other services check contact and company ids and name them. */
@Injectable()
export class ContactsDirectoryHandler {
  constructor(private readonly dataSource: DataSource) {}

  @RpcHandler(ContactsInternalRpc.Resolve)
  async resolve(req: RpcRequest): Promise<ResolveContactsReply> {
    const dto = validateInput(ResolveContactsDto, req.body);
    const contactIds = [...new Set((dto.contact_ids ?? []).filter((id) => isId(id, IdPrefix.Contact)))];
    const companyIds = [...new Set((dto.company_ids ?? []).filter((id) => isId(id, IdPrefix.Company)))];
    const [contacts, companies] = await Promise.all([
      contactIds.length
        ? this.dataSource.getRepository(Contact).find({ where: { id: In(contactIds) }, select: { id: true, email: true, firstName: true, lastName: true } })
        : [],
      companyIds.length ? this.dataSource.getRepository(Company).find({ where: { id: In(companyIds) }, select: { id: true, name: true } }) : [],
    ]);
    return {
      contacts: contacts.map((c) => ({ type: 'contact', id: c.id, name: contactDisplayName(c) })),
      companies: companies.map((c) => ({ type: 'company', id: c.id, name: c.name })),
    };
  }
}
