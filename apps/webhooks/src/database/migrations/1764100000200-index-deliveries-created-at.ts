import { MigrationInterface, QueryRunner } from 'typeorm';

/** The retention sweep deletes delivery attempts by age, oldest first, in bounded batches. */
export class IndexDeliveriesCreatedAt1764100000200 implements MigrationInterface {
  name = 'IndexDeliveriesCreatedAt1764100000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deliveries_created_at ON deliveries (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deliveries_created_at`);
  }
}
