import { MigrationInterface, QueryRunner } from 'typeorm';

/** The trigram index GET /search finds deals by name with (docs/search.md). */
export class IndexDealSearch1765200000100 implements MigrationInterface {
  name = 'IndexDealSearch1765200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deals_search_name ON deals USING gin (search_fold(name) public.gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_search_name`);
  }
}
