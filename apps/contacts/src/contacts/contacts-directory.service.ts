import { IdPrefix, isId } from '@crm/common';
import { ResolveContactsReply, ResolveContactsRequest } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { Company } from '../companies/company.entity';
import { User } from '../users/user.entity';
import { Contact } from './contact.entity';
import { contactDisplayName } from './contact.presenter';

/** Names contacts, companies and users for other services, which keep only their ids. */
@Injectable()
export class ContactsDirectoryService {
  constructor(private readonly dataSource: DataSource) {}

  /** Unknown ids are absent from the reply rather than an error: callers check many ids at once. */
  async resolve(dto: ResolveContactsRequest): Promise<ResolveContactsReply> {
    const contactIds = distinctIds(dto.contact_ids, IdPrefix.Contact);
    const companyIds = distinctIds(dto.company_ids, IdPrefix.Company);
    const userIds = distinctIds(dto.user_ids, IdPrefix.User);
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

function distinctIds(ids: string[] | undefined, prefix: IdPrefix): string[] {
  return [...new Set((ids ?? []).filter((id) => isId(id, prefix)))];
}
