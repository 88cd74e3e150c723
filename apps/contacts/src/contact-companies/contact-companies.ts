import { ChangeSet, CursorCodec } from '@crm/common';
import { ContactCompanyView, EventType, event } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { associationBetween, AssociationStore } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The companies of each contact (docs/associations.md); the contact's company_id names the primary one. */
@Injectable()
export class ContactCompanies extends AssociationStore<ContactCompanyView> {
  constructor(dataSource: DataSource, outbox: OutboxService, cursors: CursorCodec) {
    const ownerUpdated = (contactId: string, changes: ChangeSet) => event(EventType.ContactUpdated, { contact_id: contactId, ...changes });
    super(associationBetween('contacts', 'companies', ownerUpdated), dataSource, outbox, cursors);
  }
}
