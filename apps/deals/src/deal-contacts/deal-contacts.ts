import { ChangeSet, CursorCodec } from '@crm/common';
import { DealContactView, EventType, event } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { associationBetween, AssociationStore } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** The contacts of each deal (docs/associations.md); the deal's contact_id names the primary one. */
@Injectable()
export class DealContacts extends AssociationStore<DealContactView> {
  constructor(dataSource: DataSource, outbox: OutboxService, cursors: CursorCodec) {
    const ownerUpdated = (dealId: string, changes: ChangeSet) => event(EventType.DealUpdated, { deal_id: dealId, ...changes });
    super(associationBetween('deals', 'contacts', ownerUpdated), dataSource, outbox, cursors);
  }
}
