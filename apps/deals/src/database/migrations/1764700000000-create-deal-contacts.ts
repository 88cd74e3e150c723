import { createAssociationTables, dropAssociationTables } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** Many contacts per deal, with roles; every deal's contact_id becomes its primary association. */
export class CreateDealContacts1764700000000 implements MigrationInterface {
  name = 'CreateDealContacts1764700000000';

  async up(q: QueryRunner): Promise<void> {
    // Contacts live in the contacts service: no foreign key; deletions there reach this table through contact.deleted.
    await createAssociationTables(q, {
      type: 'deal_contacts',
      table: 'deal_contacts',
      owner: { table: 'deals', column: 'deal_id' },
      target: { column: 'contact_id', field: 'contact_id' },
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await dropAssociationTables(q, 'deal_contacts');
  }
}
