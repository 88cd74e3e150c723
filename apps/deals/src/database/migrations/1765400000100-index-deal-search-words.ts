import { createWordIndex, dropWordIndex } from '@crm/records';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** Deals' word index for GET /search (docs/search.md), replacing the trigram index on their names. */
export class IndexDealSearchWords1765400000100 implements MigrationInterface {
  name = 'IndexDealSearchWords1765400000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_search_name`);
    await createWordIndex(q, 'deals', 'name');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropWordIndex(q, 'deals');
    await q.query(`CREATE INDEX deals_search_name ON deals USING gin (search_fold(name) public.gin_trgm_ops)`);
  }
}
