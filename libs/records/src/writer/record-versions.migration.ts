import { QueryRunner } from 'typeorm';

/**
 * A record's version (docs/exports.md, "The handoff rule"): a bigint the outbox step of each write sets
 * from the schema's `record_versions` sequence, so exported rows and the events about them can be ordered.
 * The column has a constant default, so adding it rewrites nothing and holds the table's lock for an
 * instant (the caller sets lock_timeout); rows written before it read version 0 until their next change.
 */
export async function addRecordVersions(q: QueryRunner, table: string): Promise<void> {
  await q.query(`CREATE SEQUENCE IF NOT EXISTS record_versions`);
  await q.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 0`);
}

export async function dropRecordVersions(q: QueryRunner, table: string): Promise<void> {
  await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS version`);
  await q.query(`DROP SEQUENCE IF EXISTS record_versions`);
}
