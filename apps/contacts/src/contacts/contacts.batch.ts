import { ChangeSet, DomainError, findByIds, IdPrefix } from '@crm/common';
import { ContactSummaryView, ContactView, CreateContactDto, event, EventType, UpdateContactDto } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Company } from '../companies/company.entity';
import { ContactCompanies } from '../contact-companies/contact-companies';
import { BuiltInCustomFieldsService, DealDirectory, RecordBatchWriter, RecordTable } from '@crm/records';
import { User } from '../users/user.entity';
import { WorkLinks } from '../work-links/work-links.service';
import { Suppressions, suppressedEmail } from '../privacy/suppressions';
import { Contact } from './contact.entity';
import { presentContact, presentContactSummary } from './contact.presenter';
import { CONTACT_FIELDS, contactEmailTaken, contactPatchInput, newContactColumns } from './contact-rows';

/** Rows of `entity` with these ids, by id: the companies and owners a batch's answers name. */
export async function rowsById<T extends { id: string }>(m: EntityManager, entity: new () => T, ids: Array<string | null>): Promise<Map<string, T>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (!wanted.length) return new Map();
  const rows = await findByIds(m, entity, wanted);
  return new Map(rows.map((row) => [row.id, row]));
}

/** Contacts as a batch writes them: the rules of POST and PATCH /contacts, matched on email for upserts. */
export function contactsTable(
  links: WorkLinks,
  companies: ContactCompanies,
  suppressions: Suppressions,
): RecordTable<Contact, CreateContactDto, UpdateContactDto, ContactView, ContactSummaryView> {
  return {
    entity: Contact,
    table: 'contacts',
    noun: 'contact',
    prefix: IdPrefix.Contact,
    object: 'contacts',
    createBody: CreateContactDto,
    updateBody: UpdateContactDto,
    fields: CONTACT_FIELDS,
    references: [
      { field: 'company_id', table: 'companies', noun: 'company' },
      { field: 'owner_id', table: 'users', noun: 'user' },
    ],
    unique: { field: 'email', prop: 'email', expression: 'lower(email)', taken: contactEmailTaken },
    // An erased person's suppressed email is not stored again: not by a create, an upsert, nor a change of email.
    resolve: async (m, items) => {
      const newEmail = (item: (typeof items)[number]) => {
        const email = (item.body as { email?: unknown }).email;
        return typeof email === 'string' && email.toLowerCase() !== item.row?.email.toLowerCase() ? email : undefined;
      };
      const suppressed = await suppressions.suppressed(
        m,
        items.map(newEmail).filter((e): e is string => e !== undefined),
      );
      const byItem = new Map<number, DomainError>();
      for (const item of items) if (suppressed.has(newEmail(item)?.trim().toLowerCase() ?? '')) byItem.set(item.index, suppressedEmail());
      return { byItem };
    },
    newRow: newContactColumns,
    patchInput: contactPatchInput,
    // `record`: the contact as a query answers it, so a copy kept from an export can take it whole (docs/exports.md).
    created: (row) => event(EventType.ContactCreated, { contact_id: row.id, email: row.email, record: presentContactSummary(row) }),
    updated: (row, changes: ChangeSet) => event(EventType.ContactUpdated, { contact_id: row.id, ...changes, record: presentContactSummary(row) }),
    deleted: (row) => event(EventType.ContactDeleted, { contact_id: row.id }),
    changeView: (row) => presentContact(row, null, null),
    presentCreated: async (_m, rows) => rows.map(presentContactSummary),
    presentUpdated: async (m, rows) => {
      const [companies, owners] = await Promise.all([
        rowsById(
          m,
          Company,
          rows.map((r) => r.companyId),
        ),
        rowsById(
          m,
          User,
          rows.map((r) => r.ownerId),
        ),
      ]);
      return rows.map((r) => presentContact(r, r.companyId ? (companies.get(r.companyId) ?? null) : null, r.ownerId ? (owners.get(r.ownerId) ?? null) : null));
    },
    afterWrite: async (m, written) =>
      companies.byOwner(
        await companies.followPrimary(
          m,
          written.map(({ before, after }) => ({ owner: after.id, from: before?.companyId ?? null, to: after.companyId })),
        ),
      ),
    beforeRemove: async (m, rows) => {
      const detached = await links.detachAll(
        m,
        'contact_id',
        rows.map((r) => r.id),
      );
      const associations = companies.byOwner(
        await companies.removeForOwners(
          m,
          rows.map((r) => r.id),
        ),
      );
      for (const [id, removed] of associations) {
        const recording = detached.get(id) ?? { events: [], changes: [] };
        detached.set(id, { events: [...recording.events, ...removed.events], changes: [...recording.changes, ...removed.changes] });
      }
      return detached;
    },
  };
}

@Injectable()
export class ContactsBatchWriter extends RecordBatchWriter<Contact, CreateContactDto, UpdateContactDto, ContactView, ContactSummaryView> {
  constructor(links: WorkLinks, customFields: BuiltInCustomFieldsService, deals: DealDirectory, companies: ContactCompanies, suppressions: Suppressions) {
    super(contactsTable(links, companies, suppressions), customFields, deals);
  }
}
