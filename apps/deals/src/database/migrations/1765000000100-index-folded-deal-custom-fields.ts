import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A unique custom email field of deals compares without case: this GIN index holds each deal's custom
 * values with every string lower-cased, so that check is a containment lookup instead of a scan of deals.
 * Pipelines are few and go without.
 */
export class IndexFoldedDealCustomFields1765000000100 implements MigrationInterface {
  name = 'IndexFoldedDealCustomFields1765000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deals_custom_fields_folded ON deals USING gin ((lower(custom_fields::text)::jsonb) jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_custom_fields_folded`);
  }
}
