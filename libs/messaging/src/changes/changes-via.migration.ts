import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /changes?via=…: without an index of its own, a channel that few entries came through (`capture`,
 * `merge`) was found by reading the whole history in id order. With it, its entries are one range scan,
 * oldest first, like one object's or one actor's.
 */
export class IndexChangesVia1765000000300 implements MigrationInterface {
  name = 'IndexChangesVia1765000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX changes_via ON changes (via, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX changes_via`);
  }
}
