import { IdPrefix, InputPipe, isId } from '@crm/common';
import { ContactsInternalRpc, ResolveContactsDto, ResolveContactsReply } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource, In } from 'typeorm';
import { Company } from '../companies/company.entity';
import { User } from '../users/user.entity';
import { Contact } from './contact.entity';
import { contactDisplayName } from './contact.presenter';

/** ContactsInternalRpc.Resolve: other services check contact, company and user ids and name them. */
@Controller()
export class ContactsDirectoryController {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(ContactsInternalRpc.Resolve)
  async resolve(
    @Payload('body', new InputPipe(ResolveContactsDto)) body: ResolveContactsDto,
  ): Promise<ResolveContactsReply> {
    const dto = body;
    const contactIds = [...new Set((dto.contact_ids ?? []).filter((id) => isId(id, IdPrefix.Contact)))];
    const companyIds = [...new Set((dto.company_ids ?? []).filter((id) => isId(id, IdPrefix.Company)))];
    const userIds = [...new Set((dto.user_ids ?? []).filter((id) => isId(id, IdPrefix.User)))];
    const [contacts, companies, users] = await Promise.all([
      contactIds.length
        ? this.dataSource.getRepository(Contact).find({ where: { id: In(contactIds) }, select: { id: true, email: true, firstName: true, lastName: true } })
        : [],
      companyIds.length ? this.dataSource.getRepository(Company).find({ where: { id: In(companyIds) }, select: { id: true, name: true } }) : [],
      userIds.length ? this.dataSource.getRepository(User).find({ where: { id: In(userIds) }, select: { id: true, name: true } }) : [],
    ]);
    return {
      contacts: contacts.map((c) => ({ type: 'contact', id: c.id, name: contactDisplayName(c) })),
      companies: companies.map((c) => ({ type: 'company', id: c.id, name: c.name })),
      users: users.map((u) => ({ type: 'user', id: u.id, name: u.name })),
    };
  }
}
