import { addRecordVersions, dropRecordVersions } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** contacts.version: the number the handoff rule of exports compares (docs/exports.md). */
export class AddContactVersions1768500000000 implements MigrationInterface {
  name = 'AddContactVersions1768500000000';

  async up(q: QueryRunner): Promise<void> {
    // Migrations run in a transaction each: the column's instant lock waits at most this long.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await addRecordVersions(q, 'contacts');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await dropRecordVersions(q, 'contacts');
  }
}
