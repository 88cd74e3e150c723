import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * POST /<object>/query on a custom field: equality and `$in` test `custom_fields @> {"<name>": value}`
 * beside the typed comparison, and these GIN indexes (jsonb_path_ops: containment only, about a third the
 * size of the default opclass) answer it, for every custom field at once, without one index per field.
 */
export class IndexCustomFieldValues1764500000000 implements MigrationInterface {
  name = 'IndexCustomFieldValues1764500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['contacts', 'companies', 'activities', 'tasks']) {
      await q.query(`CREATE INDEX ${table}_custom_fields ON ${table} USING gin (custom_fields jsonb_path_ops)`);
    }
    await q.query(`CREATE INDEX object_records_values ON object_records USING gin ("values" jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX object_records_values`);
    for (const table of ['tasks', 'activities', 'companies', 'contacts']) await q.query(`DROP INDEX ${table}_custom_fields`);
  }
}
