import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Aggregations of one owner's or one company's contacts (docs/aggregate.md) group most often by stage or
 * source. The owner and company indexes, which page those contacts by id, now carry both, so such a
 * grouping is an index-only scan of that owner's or company's entries, with no visit to the table.
 */
export class IndexContactGroupings1765300000300 implements MigrationInterface {
  name = 'IndexContactGroupings1765300000300';

  async up(q: QueryRunner): Promise<void> {
    for (const column of ['owner_id', 'company_id']) {
      await q.query(`DROP INDEX contacts_${column}`);
      await q.query(`CREATE INDEX contacts_${column} ON contacts (${column}, id) INCLUDE (stage, source)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const column of ['owner_id', 'company_id']) {
      await q.query(`DROP INDEX contacts_${column}`);
      await q.query(`CREATE INDEX contacts_${column} ON contacts (${column}, id)`);
    }
  }
}
