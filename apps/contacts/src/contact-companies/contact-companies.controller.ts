import { DomainError, ErrorCode, IdPrefix, isId } from '@crm/common';
import {
  AddContactCompanyDto,
  CompanyContactItem,
  ContactCompanyItem,
  Ops,
  PageQuery,
  RelatedSummary,
  UpdateAssociationDto,
  UpdateAssociationTypeDto,
} from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource, EntityManager } from 'typeorm';
import { contactDisplayName } from '../contacts/contact.presenter';
import { ContactCompanies } from './contact-companies';

type Params = { id: string; company_id: string };

/** /contacts/:id/companies, /companies/:id/contacts and the labels of contact_companies. */
@Controller()
export class ContactCompaniesController {
  constructor(
    private readonly associations: ContactCompanies,
    private readonly dataSource: DataSource,
  ) {}

  @Handles(Ops.contacts.addCompany)
  async add(@Payload('params') { id }: Params, @Payload('body') body: AddContactCompanyDto) {
    const row = await this.associations.add(id, { target: body.company_id, role: body.role, is_primary: body.is_primary }, (m) =>
      requireCompanyFound(m, body.company_id),
    );
    return { data: this.associations.present(row) };
  }

  @Handles(Ops.contacts.companies)
  list(@Payload('params') { id }: Params, @Payload('query') query: PageQuery) {
    return this.associations.listForOwner<ContactCompanyItem>(id, query, (ids) => this.companyNames(ids));
  }

  @Handles(Ops.contacts.updateCompany)
  async update(@Payload('params') { id, company_id }: Params, @Payload('body') body: UpdateAssociationDto) {
    return { data: this.associations.present(await this.associations.update(id, company_id, body)) };
  }

  @Handles(Ops.contacts.removeCompany)
  async remove(@Payload('params') { id, company_id }: Params) {
    await this.associations.remove(id, company_id);
  }

  @Handles(Ops.companies.contacts)
  async contactsOf(@Payload('params') { id }: { id: string }, @Payload('query') query: PageQuery) {
    const exists = isId(id, IdPrefix.Company) && ((await this.dataSource.query(`SELECT 1 FROM companies WHERE id = $1`, [id])) as unknown[]).length > 0;
    if (!exists) throw DomainError.notFound('company', id);
    return this.associations.listForTarget<CompanyContactItem>(id, query, (ids) => this.contactNames(ids));
  }

  @Handles(Ops.schema.updateAssociation)
  async setLabels(@Payload('params') { type }: { type: string }, @Payload('body') body: UpdateAssociationTypeDto) {
    // deal_contacts is routed to the deals service; any other name is no association type.
    if (type !== this.associations.spec.type) throw new DomainError(ErrorCode.NotFound, `No association type '${type}'.`);
    return { data: await this.associations.setLabels(body.labels) };
  }

  private async companyNames(ids: string[]): Promise<Map<string, RelatedSummary>> {
    if (!ids.length) return new Map();
    const rows = (await this.dataSource.query(`SELECT id, name FROM companies WHERE id = ANY($1::text[])`, [ids])) as Array<{ id: string; name: string }>;
    return new Map(rows.map((r) => [r.id, { type: 'company', id: r.id, name: r.name }]));
  }

  private async contactNames(ids: string[]): Promise<Map<string, RelatedSummary>> {
    if (!ids.length) return new Map();
    const rows = (await this.dataSource.query(`SELECT id, email, first_name AS "firstName", last_name AS "lastName" FROM contacts WHERE id = ANY($1::text[])`, [
      ids,
    ])) as Array<{
      id: string;
      email: string;
      firstName: string | null;
      lastName: string | null;
    }>;
    return new Map(rows.map((r) => [r.id, { type: 'contact', id: r.id, name: contactDisplayName(r) }]));
  }
}

/** The company must exist, and cannot be deleted until the association commits (FOR KEY SHARE). */
async function requireCompanyFound(m: EntityManager, companyId: string): Promise<void> {
  const rows = (await m.query(`SELECT 1 FROM companies WHERE id = $1 FOR KEY SHARE`, [companyId])) as unknown[];
  if (!rows.length) {
    const message = `No company with id '${companyId}'.`;
    throw new DomainError(ErrorCode.NotFound, message, [{ field: 'company_id', code: 'not_found', message }]);
  }
}
