import { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { returnedRows } from './postgres-errors';

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
  byIds: string;
  /** Each column's name in the table, by the entity property it holds. */
  columnOf: Map<string, string>;
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
    const byIds = `SELECT ${columns} FROM ${table} WHERE ${quote(metadata.primaryColumns[0].databaseName)} = ANY($1::text[])`;
    const columnOf = new Map(metadata.columns.map((c) => [c.propertyPath, c.databaseName]));
    sql = { metadata, byId, byIdForUpdate: `${byId} FOR UPDATE`, byIdForShare: `${byId} FOR SHARE`, byIds, columnOf };
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
export async function findById<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  id: string,
  lock: boolean | 'share' = false,
): Promise<T | null> {
  const sql = sqlOf(manager, target);
  const rows: Record<string, unknown>[] = await manager.query(lock === 'share' ? sql.byIdForShare : lock ? sql.byIdForUpdate : sql.byId, [id]);
  return rows.length ? hydrate(manager, target, rows[0]) : null;
}

/** The rows with these primary keys, in no particular order (none for an empty list, without a round trip). */
export async function findByIds<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, ids: readonly string[]): Promise<T[]> {
  if (!ids.length) return [];
  const rows: Record<string, unknown>[] = await manager.query(sqlOf(manager, target).byIds, [ids]);
  return rows.map((row) => hydrate(manager, target, row));
}

/** Inserts one row and returns it as stored (defaults filled in), without reading it back. */
export async function insertReturning<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, values: QueryDeepPartialEntity<T>): Promise<T> {
  const result = await manager.createQueryBuilder().insert().into(target).values(values).returning('*').execute();
  return hydrate(manager, target, (result.raw as Record<string, unknown>[])[0]);
}

/** Updates the row with primary key `id`, which the caller knows exists (it holds the row's lock), and returns it as stored. */
export async function updateReturning<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  id: string,
  set: QueryDeepPartialEntity<T>,
): Promise<T> {
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

/** A row as `jsonb_populate_recordset` reads it: column names as in the table, dates as ISO strings. */
export type ColumnValues = Record<string, unknown>;

function tableOf(metadata: EntityMetadata): string {
  return metadata.tablePath
    .split('.')
    .map((name) => `"${name.replace(/"/g, '""')}"`)
    .join('.');
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The stored columns of `props` (entity property names), in the table's terms. */
export function columnsOf(manager: EntityManager, target: EntityTarget<ObjectLiteral>, props: readonly string[]): string[] {
  const { metadata } = sqlOf(manager, target);
  return props.map((prop) => {
    const column = metadata.findColumnWithPropertyPath(prop);
    if (!column) throw new Error(`${metadata.name} has no column for ${prop}`);
    return column.databaseName;
  });
}

/** `entity` as the column values `insertRows` and `updateRows` take: only `props`, dates as ISO strings. */
export function columnValues<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  entity: Partial<T>,
  props: readonly string[],
): ColumnValues {
  const { metadata, columnOf } = sqlOf(manager, target);
  const row: ColumnValues = {};
  for (const prop of props) {
    // A relation's join column is not among the columns by property: TypeORM's own lookup finds it.
    const column = columnOf.get(prop) ?? metadata.findColumnWithPropertyPath(prop)!.databaseName;
    const value = (entity as Record<string, unknown>)[prop];
    row[column] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return row;
}

/**
 * Inserts many rows with one statement and one parameter: the rows travel as a JSON array that
 * PostgreSQL turns into the table's own row type, so every column keeps its type without a cast per
 * column. `ignoreConflicts` skips rows that would break a unique index (ON CONFLICT DO NOTHING); the rows
 * returned are those inserted, as stored.
 */
export async function insertRows<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  rows: readonly ColumnValues[],
  options: { ignoreConflicts?: boolean } = {},
): Promise<T[]> {
  if (!rows.length) return [];
  const { metadata } = sqlOf(manager, target);
  const columns = Object.keys(rows[0]).map(quoted).join(', ');
  const sql = `INSERT INTO ${tableOf(metadata)} (${columns})
    SELECT ${columns} FROM jsonb_populate_recordset(NULL::${tableOf(metadata)}, $1::jsonb)
    ${options.ignoreConflicts ? 'ON CONFLICT DO NOTHING' : ''} RETURNING *`;
  const inserted: Record<string, unknown>[] = await manager.query(sql, [JSON.stringify(rows)]);
  return inserted.map((row) => hydrate(manager, target, row));
}

/**
 * Updates many rows by primary key with one statement: each row names its key and the columns to write,
 * all rows the same columns (`extra` adds SQL assignments such as a timestamp). Returns the rows as stored.
 */
export async function updateRows<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  rows: readonly ColumnValues[],
  extra: Record<string, string> = {},
): Promise<T[]> {
  if (!rows.length) return [];
  const { metadata } = sqlOf(manager, target);
  const key = metadata.primaryColumns[0].databaseName;
  const assignments = [
    ...Object.keys(rows[0])
      .filter((column) => column !== key)
      .map((column) => `${quoted(column)} = v.${quoted(column)}`),
    ...Object.entries(extra).map(([column, sql]) => `${quoted(column)} = ${sql}`),
  ];
  const table = tableOf(metadata);
  // The keys again as an array: the planner takes jsonb_populate_recordset for 100 rows whatever it holds, and
  // joined on the key alone it read the whole table to update one row; `= ANY` of the keys reads their index.
  const updated: [Record<string, unknown>[], number] = await manager.query(
    `UPDATE ${table} AS t SET ${assignments.join(', ')}
       FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb) AS v
      WHERE t.${quoted(key)} = ANY($2) AND t.${quoted(key)} = v.${quoted(key)}
      RETURNING t.*`,
    [JSON.stringify(rows), rows.map((row) => row[key])],
  );
  return returnedRows<Record<string, unknown>>(updated).map((row) => hydrate(manager, target, row));
}

/** The rows with these primary keys, locked FOR UPDATE in key order (so two batches cannot deadlock). */
export async function lockRows<T extends ObjectLiteral>(manager: EntityManager, target: EntityTarget<T>, ids: readonly string[], where = ''): Promise<T[]> {
  return (await lockRowsAt(manager, target, ids, 'NULL', where)).rows;
}

/** The rows with these primary keys and the value of `clock` (an SQL expression) in one statement; `tail` ends it (ordering, locking). */
async function rowsAt<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  ids: readonly string[],
  clock: string,
  tail: (key: string) => string,
): Promise<{ rows: T[]; now: Date | undefined }> {
  if (!ids.length) return { rows: [], now: undefined };
  const { metadata } = sqlOf(manager, target);
  const key = quoted(metadata.primaryColumns[0].databaseName);
  const rows: Record<string, unknown>[] = await manager.query(
    `SELECT *, ${clock} AS "__clock" FROM ${tableOf(metadata)} WHERE ${key} = ANY($1::text[]) ${tail(key)}`,
    [ids],
  );
  return { rows: rows.map((row) => hydrate(manager, target, row)), now: rows[0]?.__clock as Date | undefined };
}

/** The rows with these primary keys, in no particular order, and the reading of `clock` (an SQL expression) taken in the same statement; no reading without a row. */
export async function findByIdsAt<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  ids: readonly string[],
  clock: string,
): Promise<{ rows: T[]; now: Date | undefined }> {
  return rowsAt(manager, target, ids, clock, () => '');
}

/**
 * `lockRows`, with the value of the SQL expression `clock` (the transaction's time) read in the same
 * statement, so a write that dates its changes needs no round trip of its own; `now` is undefined when no row matched.
 */
export async function lockRowsAt<T extends ObjectLiteral>(
  manager: EntityManager,
  target: EntityTarget<T>,
  ids: readonly string[],
  clock: string,
  where = '',
): Promise<{ rows: T[]; now: Date | undefined }> {
  return rowsAt(manager, target, ids, clock, (key) => `${where} ORDER BY ${key} FOR UPDATE`);
}
