import { addRecordVersions, dropRecordVersions } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** contacts.version: the number the handoff rule of exports compares (docs/exports.md). */
export class AddContactVersions1767500000000 implements MigrationInterface {
  name = 'AddContactVersions1767500000000';

  async up(q: QueryRunner): Promise<void> {
    await addRecordVersions(q, 'contacts');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRecordVersions(q, 'contacts');
  }
}
