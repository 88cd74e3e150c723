import { addRecordVersions, dropRecordVersions } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** deals.version: the number the handoff rule of exports compares (docs/exports.md). */
export class AddDealVersions1767500000100 implements MigrationInterface {
  name = 'AddDealVersions1767500000100';

  async up(q: QueryRunner): Promise<void> {
    await addRecordVersions(q, 'deals');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRecordVersions(q, 'deals');
  }
}
