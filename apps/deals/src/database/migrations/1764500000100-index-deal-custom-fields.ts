import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * POST /deals/query on a custom field: equality and `$in` test `custom_fields @> {"<name>": value}` beside
 * the typed comparison, and this GIN index (jsonb_path_ops, containment only) answers it for every custom
 * field of deals at once.
 */
export class IndexDealCustomFields1764500000100 implements MigrationInterface {
  name = 'IndexDealCustomFields1764500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deals_custom_fields ON deals USING gin (custom_fields jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_custom_fields`);
  }
}
