import { CursorCodec, IdPrefix } from '@crm/common';
import { DealContactView, EventType, event } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { AssociationStore } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The contacts of each deal (docs/associations.md); the deal's contact_id names the primary one. */
@Injectable()
export class DealContacts extends AssociationStore<DealContactView> {
  constructor(dataSource: DataSource, outbox: OutboxService, cursors: CursorCodec) {
    super(
      {
        type: 'deal_contacts',
        table: 'deal_contacts',
        owner: { table: 'deals', column: 'deal_id', noun: 'deal', prefix: IdPrefix.Deal, object: 'deals' },
        target: { column: 'contact_id', noun: 'contact', prefix: IdPrefix.Contact, field: 'contact_id', path: 'contacts' },
        events: { added: EventType.DealContactAdded, updated: EventType.DealContactUpdated, removed: EventType.DealContactRemoved },
        ownerUpdated: (dealId, changes) => event(EventType.DealUpdated, { deal_id: dealId, ...changes }),
      },
      dataSource,
      outbox,
      cursors,
    );
  }
}
