import { MigrationInterface, QueryRunner } from 'typeorm';

/** Custom fields on activities and tasks, and an enforcement level for each built-in object's custom fields. */
export class CustomFieldsEverywhere1764300000000 implements MigrationInterface {
  name = 'CustomFieldsEverywhere1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE built_in_custom_fields
        ADD COLUMN enforcement_level text NOT NULL DEFAULT 'hard' CHECK (enforcement_level IN ('none', 'soft', 'hard'))`);
    await q.query(`ALTER TABLE activities ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE tasks ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks DROP COLUMN custom_fields`);
    await q.query(`ALTER TABLE activities DROP COLUMN custom_fields`);
    await q.query(`ALTER TABLE built_in_custom_fields DROP COLUMN enforcement_level`);
  }
}
