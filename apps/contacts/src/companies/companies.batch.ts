import { ChangeSet, IdPrefix, returnedRows } from '@crm/common';
import { CompanyView, CreateCompanyDto, event, EventType, UpdateCompanyDto } from '@crm/contracts';
import { updatedChange } from '@crm/messaging';
import { BatchRecording, BuiltInCustomFieldsService, DealDirectory, NOW_MS, RecordBatchWriter, RecordTable } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { ContactCompanies } from '../contact-companies/contact-companies';
import { Company } from './company.entity';
import { presentCompany } from './company.presenter';
import { COMPANY_FIELDS, companyDomainTaken } from './company-rows';

/** Companies as a batch writes them: the rules of POST and PATCH /companies, matched on domain for upserts. */
export const companiesTable = (contactCompanies: ContactCompanies): RecordTable<Company, CreateCompanyDto, UpdateCompanyDto, CompanyView, CompanyView> => ({
  entity: Company,
  table: 'companies',
  noun: 'company',
  prefix: IdPrefix.Company,
  object: 'companies',
  createBody: CreateCompanyDto,
  updateBody: UpdateCompanyDto,
  fields: COMPANY_FIELDS,
  references: [],
  unique: { field: 'domain', prop: 'domain', expression: 'lower(domain)', taken: companyDomainTaken },
  newRow: (dto) => ({ name: dto.name, domain: dto.domain ?? null, industry: dto.industry ?? null }),
  created: (row) => event(EventType.CompanyCreated, { company_id: row.id, name: row.name, domain: row.domain }),
  updated: (row, changes: ChangeSet) => event(EventType.CompanyUpdated, { company_id: row.id, ...changes }),
  deleted: (row) => event(EventType.CompanyDeleted, { company_id: row.id }),
  changeView: presentCompany,
  presentCreated: async (_m, rows) => rows.map(presentCompany),
  presentUpdated: async (_m, rows) => rows.map(presentCompany),
  /**
   * Contacts of a deleted company stay without it, each with its contact.updated and change entry, and
   * every association with it goes, as DELETE /companies/:id does.
   */
  beforeRemove: async (m, rows) => {
    const unlinked = returnedRows<{ id: string; was: string }>(
      await m.query(
        `UPDATE contacts c SET company_id = NULL, updated_at = ${NOW_MS}
           FROM (SELECT id, company_id AS was FROM contacts WHERE company_id = ANY($1::text[]) ORDER BY id FOR UPDATE) o
          WHERE c.id = o.id RETURNING c.id, o.was`,
        [rows.map((r) => r.id)],
      ),
    );
    const recordings = new Map<string, BatchRecording>();
    for (const { id, was } of unlinked.sort((a, b) => a.id.localeCompare(b.id))) {
      const changes = { changed: ['company_id'], previous: { company_id: was }, current: { company_id: null } };
      const recording = recordings.get(was) ?? { events: [], changes: [] };
      recording.events.push(event(EventType.ContactUpdated, { contact_id: id, ...changes }));
      recording.changes.push(updatedChange('contacts', id, changes)!);
      recordings.set(was, recording);
    }
    for (const row of rows) {
      const removed = await contactCompanies.removeForTargets(m, [row.id]);
      const recording = recordings.get(row.id) ?? { events: [], changes: [] };
      recordings.set(row.id, { events: [...removed.events, ...recording.events], changes: [...removed.changes, ...recording.changes] });
    }
    return recordings;
  },
});

@Injectable()
export class CompaniesBatchWriter extends RecordBatchWriter<Company, CreateCompanyDto, UpdateCompanyDto, CompanyView, CompanyView> {
  constructor(customFields: BuiltInCustomFieldsService, deals: DealDirectory, contactCompanies: ContactCompanies) {
    super(companiesTable(contactCompanies), customFields, deals);
  }
}
