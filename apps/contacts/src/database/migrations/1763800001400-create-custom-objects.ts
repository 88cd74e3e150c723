import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateCustomObjects1763800001400 implements MigrationInterface {
  name = 'CreateCustomObjects1763800001400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE object_types (
        id text PRIMARY KEY,
        slug text NOT NULL,
        name text NOT NULL,
        enforcement_level text NOT NULL CHECK (enforcement_level IN ('none', 'soft', 'hard')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
        fields jsonb NOT NULL DEFAULT '[]'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    // Archived types keep their slug: records stay readable under it, and it can be re-activated.
    await q.query(`CREATE UNIQUE INDEX object_types_slug_key ON object_types (slug)`);
    await q.query(`
      CREATE TABLE object_records (
        id text PRIMARY KEY,
        object_type_id text NOT NULL REFERENCES object_types (id),
        "values" jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE INDEX object_records_type ON object_records (object_type_id, id)`);
    // Custom fields added to built-in objects (contacts, companies): one row per object, created on first use.
    await q.query(`
      CREATE TABLE built_in_custom_fields (
        object_slug text PRIMARY KEY,
        fields jsonb NOT NULL DEFAULT '[]'::jsonb,
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`ALTER TABLE contacts ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
    await q.query(`ALTER TABLE companies ADD COLUMN custom_fields jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE companies DROP COLUMN custom_fields`);
    await q.query(`ALTER TABLE contacts DROP COLUMN custom_fields`);
    await q.query(`DROP TABLE built_in_custom_fields`);
    await q.query(`DROP TABLE object_records`);
    await q.query(`DROP TABLE object_types`);
  }
}
