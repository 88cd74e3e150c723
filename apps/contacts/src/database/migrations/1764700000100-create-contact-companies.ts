import { createAssociationTables, dropAssociationTables } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** Many companies per contact, with roles; every contact's company_id becomes its primary association. */
export class CreateContactCompanies1764700000100 implements MigrationInterface {
  name = 'CreateContactCompanies1764700000100';

  async up(q: QueryRunner): Promise<void> {
    await createAssociationTables(q, {
      type: 'contact_companies',
      table: 'contact_companies',
      owner: { table: 'contacts', column: 'contact_id' },
      target: { column: 'company_id', references: 'companies', field: 'company_id' },
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await dropAssociationTables(q, 'contact_companies');
  }
}
