import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A unique custom email field compares without case: these GIN indexes hold each row's custom values with
 * every string lower-cased (`lower(column::text)::jsonb`: lower-casing JSON text changes only its strings),
 * so that check is a containment lookup, like every other unique check, instead of a scan of the records.
 */
export class IndexFoldedCustomFieldValues1765000000000 implements MigrationInterface {
  name = 'IndexFoldedCustomFieldValues1765000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['contacts', 'companies', 'activities', 'tasks']) {
      await q.query(`CREATE INDEX ${table}_custom_fields_folded ON ${table} USING gin ((lower(custom_fields::text)::jsonb) jsonb_path_ops)`);
    }
    await q.query(`CREATE INDEX object_records_values_folded ON object_records USING gin ((lower("values"::text)::jsonb) jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX object_records_values_folded`);
    for (const table of ['tasks', 'activities', 'companies', 'contacts']) await q.query(`DROP INDEX ${table}_custom_fields_folded`);
  }
}
