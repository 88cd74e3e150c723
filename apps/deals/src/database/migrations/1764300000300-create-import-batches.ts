import { MigrationInterface, QueryRunner } from 'typeorm';

/** Batches of import rows applied here, with what came of them: a batch asked for again is answered, not reapplied. */
export class CreateImportBatches1764300000300 implements MigrationInterface {
  name = 'CreateImportBatches1764300000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE import_batches (
        import_id text NOT NULL,
        first_seq integer NOT NULL,
        result jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (import_id, first_seq)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE import_batches`);
  }
}
