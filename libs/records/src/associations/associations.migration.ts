import { AssociationType } from '@crm/contracts';
import { QueryRunner } from 'typeorm';

/**
 * The tables of one association type (docs/associations.md), for the migration of the service that keeps
 * it: the pairs, with at most one primary per owner (a partial unique index), an index to read them from
 * the target's side, and the type's labels. Existing single ids become primary associations.
 */
export async function createAssociationTables(
  q: QueryRunner,
  spec: { type: AssociationType; table: string; owner: { table: string; column: string }; target: { column: string; references?: string; field: string } },
): Promise<void> {
  const { table, owner, target } = spec;
  const targetReference = target.references ? ` REFERENCES ${target.references} (id) ON DELETE CASCADE` : '';
  await q.query(`
    CREATE TABLE ${table} (
      ${owner.column} text NOT NULL REFERENCES ${owner.table} (id) ON DELETE CASCADE,
      ${target.column} text NOT NULL${targetReference},
      role text CHECK (char_length(role) BETWEEN 1 AND 64),
      is_primary boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (${owner.column}, ${target.column})
    )`);
  await q.query(`CREATE UNIQUE INDEX ${table}_one_primary ON ${table} (${owner.column}) WHERE is_primary`);
  await q.query(`CREATE INDEX ${table}_by_${target.column} ON ${table} (${target.column}, ${owner.column})`);
  await q.query(
    `INSERT INTO ${table} (${owner.column}, ${target.column}, role, is_primary, created_at)
     SELECT id, ${target.field}, NULL, true, updated_at FROM ${owner.table} WHERE ${target.field} IS NOT NULL`,
  );
  await q.query(`
    CREATE TABLE IF NOT EXISTS association_types (
      type text PRIMARY KEY,
      labels jsonb NOT NULL DEFAULT '[]'::jsonb,
      updated_at timestamptz NOT NULL
    )`);
  await q.query(`INSERT INTO association_types (type, labels, updated_at) VALUES ($1, '[]'::jsonb, date_trunc('milliseconds', clock_timestamp()))`, [
    spec.type,
  ]);
}

export async function dropAssociationTables(q: QueryRunner, table: string): Promise<void> {
  await q.query(`DROP TABLE ${table}`);
  await q.query(`DROP TABLE association_types`);
}
