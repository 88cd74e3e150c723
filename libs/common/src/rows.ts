import { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/**
 * Single-row reads and writes for the request hot paths. `findOne` builds, aliases and parses a query
 * builder on every call, and an insert followed by a read costs a second round trip; here the SQL of a
 * primary-key read is made once per entity, an insert returns its row, and both rows are hydrated by
 * TypeORM's own driver rules (types, dates, transformers), so the entities are the ones `findOne` gives.
 */
interface EntitySql {
  metadata: EntityMetadata;
  byId: string;
  byIdForUpdate: string;
  byIdForShare: string;
}

const compiled = new WeakMap<EntityMetadata, EntitySql>();

function sqlOf(manager: EntityManager, target: EntityTarget<ObjectLiteral>): EntitySql {
  const metadata = manager.connection.getMetadata(target);
  let sql = compiled.get(metadata);
  if (!sql) {
    if (metadata.primaryColumns.length !== 1) throw new Error(`${metadata.name} needs a single-column primary key for findById`);
    const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
    const table = metadata.tablePath.split('.').map(quote).join('.');
    const columns = metadata.columns.map((c) => quote(c.databaseName)).join(', ');
    const byId = `SELECT ${columns} FROM ${table} WHERE ${quote(metadata.primaryColumns[0].databaseName)} = $1`;
    sql = { metadata, byId, byIdForUpdate: `${byId} FOR UPDATE`, byIdForShare: `${byId} FOR SHARE` };
    compiled.set(metadata, sql);
  }
  return sql;
}

/** An entity from a row as PostgreSQL returned it (column names as in the table). */
export function hydrate<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, row: Record<string, unknown>): T {
  const { metadata } = sqlOf(manager, target);
  const driver = manager.connection.driver;
  const entity = metadata.create() as T;
  for (const column of metadata.columns) {
    column.setEntityValue(entity, driver.prepareHydratedValue(row[column.databaseName], column));
  }
  return entity;
}

/** The row with primary key `id`, or null; `lock` holds it until the transaction ends: true FOR UPDATE, 'share' FOR SHARE. */
export async function findById<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, id: string, lock: boolean | 'share' = false): Promise<T | null> {
  const sql = sqlOf(manager, target);
  const rows: Record<string, unknown>[] = await manager.query(lock === 'share' ? sql.byIdForShare : lock ? sql.byIdForUpdate : sql.byId, [id]);
  return rows.length ? hydrate(manager, target, rows[0]) : null;
}

/** Inserts one row and returns it as stored (defaults filled in), without reading it back. */
export async function insertReturning<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, values: QueryDeepPartialEntity<T>): Promise<T> {
  const result = await manager.createQueryBuilder().insert().into(target).values(values).returning('*').execute();
  return hydrate(manager, target, (result.raw as Record<string, unknown>[])[0]);
}

/** Updates the row with primary key `id`, which the caller knows exists (it holds the row's lock), and returns it as stored. */
export async function updateReturning<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, id: string, set: QueryDeepPartialEntity<T>): Promise<T> {
  const { metadata } = sqlOf(manager, target);
  const result = await manager
    .createQueryBuilder()
    .update(target)
    .set(set)
    .where(`${metadata.primaryColumns[0].propertyPath} = :id`, { id })
    .returning('*')
    .execute();
  const [row] = result.raw as Record<string, unknown>[];
  if (!row) throw new Error(`${metadata.name} ${id} vanished while its update held the row lock`);
  return hydrate(manager, target, row);
}
