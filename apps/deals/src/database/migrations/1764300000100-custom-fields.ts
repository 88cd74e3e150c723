import { MigrationInterface, QueryRunner } from 'typeorm';

/** Custom fields on deals and pipelines: their definitions and enforcement level, and a column of values each. */
export class CustomFields1764300000100 implements MigrationInterface {
  name = 'CustomFields1764300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE built_in_custom_fields (
        object_slug text PRIMARY KEY,
        fields jsonb NOT NULL DEFAULT '[]'::jsonb,
        enforcement_level text NOT NULL DEFAULT 'hard' CHECK (enforcement_level IN ('none', 'soft', 'hard')),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`ALTER TABLE deals ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE pipelines ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE pipelines DROP COLUMN custom_fields`);
    await q.query(`ALTER TABLE deals DROP COLUMN custom_fields`);
    await q.query(`DROP TABLE built_in_custom_fields`);
  }
}
