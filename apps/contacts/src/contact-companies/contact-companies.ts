import { CursorCodec, IdPrefix } from '@crm/common';
import { ContactCompanyView, EventType, event } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { AssociationStore } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The companies of each contact (docs/associations.md); the contact's company_id names the primary one. */
@Injectable()
export class ContactCompanies extends AssociationStore<ContactCompanyView> {
  constructor(dataSource: DataSource, outbox: OutboxService, cursors: CursorCodec) {
    super(
      {
        type: 'contact_companies',
        table: 'contact_companies',
        owner: { table: 'contacts', column: 'contact_id', noun: 'contact', prefix: IdPrefix.Contact, object: 'contacts' },
        target: { column: 'company_id', noun: 'company', prefix: IdPrefix.Company, field: 'company_id', path: 'companies' },
        events: { added: EventType.ContactCompanyAdded, updated: EventType.ContactCompanyUpdated, removed: EventType.ContactCompanyRemoved },
        ownerUpdated: (contactId, changes) => event(EventType.ContactUpdated, { contact_id: contactId, ...changes }),
      },
      dataSource,
      outbox,
      cursors,
    );
  }
}
