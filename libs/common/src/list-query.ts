import { ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { CursorCodec, cursorValueFits, CursorValueType, idKey } from './cursors';
import { Page, pageSize, toPage } from './pagination';
import { validationFailed } from './validation';

/**
 * What a list tells keysetPage about its filters. `rangeFiltered`: a filter is a range of an indexed
 * column (a date window, a minimum value), whose matches can all lie far along the id order, so the page
 * is read as filteredRows says when PostgreSQL would walk the primary key for it. Lists filtered only by
 * equality or by text search leave it off: there the walk finds a page soon, or the matches are too many
 * for the filter's own index to fetch cheaply (a short search pattern reads the whole table).
 */
export interface KeysetOptions {
  rangeFiltered?: boolean;
}

/** One page of a list served oldest first by its text primary key `id`, or in the order `sort` asks for. */
export interface KeysetPage<E extends ObjectLiteral> {
  /** Rows after the cursor in the page's order, one more than the page holds; a list narrows it with andWhere. */
  readonly qb: SelectQueryBuilder<E>;
  /**
   * Reads the rows and presents them; the next cursor resumes after the last row served. `prepare` sees
   * the rows first, for a list that loads what its rows hold in one query rather than one per row.
   */
  read<T>(present: (row: E) => T, prepare?: (rows: E[]) => Promise<void>): Promise<Page<T>>;
}

/** Most keys a list's `sort` may name, as a query's sort (docs/query.md). */
export const MAX_SORT_KEYS = 5;

const CASTS: Record<string, CursorValueType> = {
  text: 'text',
  varchar: 'text',
  char: 'text',
  integer: 'numeric',
  int: 'numeric',
  bigint: 'numeric',
  numeric: 'numeric',
  'double precision': 'numeric',
  real: 'numeric',
  boolean: 'boolean',
  timestamptz: 'timestamptz',
  'timestamp with time zone': 'timestamptz',
};

/** An entity property as the API names it: `icpScore` is `icp_score`. */
export const apiNameOf = (property: string) => property.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Rows after a cursor's row in the order `keys…, id` ascending, where nulls sort last ascending and first
 * descending (PostgreSQL's default). `bind` turns the cursor's value of key `i` (or, for `'id'`, its id)
 * into a parameter placeholder of that key's type, so every value travels bound.
 */
export function keysetAfter(
  keys: ReadonlyArray<{ sql: string; desc: boolean }>,
  values: ReadonlyArray<string | null>,
  idSql: string,
  bind: (value: string, key: number | 'id') => string,
  lastId: string,
): string {
  const terms: string[] = [];
  const equal: string[] = [];
  for (const [i, key] of keys.entries()) {
    const value = values[i];
    const p = value === null ? '' : bind(value, i);
    // The id itself (sort by id): never null and unique, so the row after it is decided here, by a range
    // the primary key answers; `OR id IS NULL` would make every page a scan from the start.
    if (key.sql === idSql && value !== null) {
      terms.push([...equal, `${key.sql} ${key.desc ? '<' : '>'} ${p}`].join(' AND '));
      return `(${terms.map((t) => `(${t})`).join(' OR ')})`;
    }
    const later =
      value === null ? (key.desc ? `${key.sql} IS NOT NULL` : 'FALSE') : key.desc ? `${key.sql} < ${p}` : `(${key.sql} > ${p} OR ${key.sql} IS NULL)`;
    terms.push([...equal, later].join(' AND '));
    equal.push(value === null ? `${key.sql} IS NULL` : `${key.sql} = ${p}`);
  }
  terms.push([...equal, `${idSql} > ${bind(lastId, 'id')}`].join(' AND '));
  return `(${terms.map((t) => `(${t})`).join(' OR ')})`;
}

interface SortKey {
  sql: string;
  cast: CursorValueType;
  desc: boolean;
}

/** `sort=-value,created_at` as columns of the list's rows; every problem is one `validation_failed` on `sort`. */
function sortKeys<E extends ObjectLiteral>(repository: Repository<E>, alias: string, sort: string): SortKey[] {
  const columns = new Map(
    repository.metadata.columns
      .filter((c) => CASTS[String(c.type)])
      .map((c) => [apiNameOf(c.propertyName), { sql: `${alias}.${c.databaseName}`, cast: CASTS[String(c.type)] }]),
  );
  const names = sort.split(',');
  const problem = (message: string) => validationFailed([{ field: 'sort', code: 'invalid_value', message }]);
  if (names.length > MAX_SORT_KEYS) throw problem(`sort names at most ${MAX_SORT_KEYS} fields`);
  return names.map((raw) => {
    const desc = raw.startsWith('-');
    const name = desc ? raw.slice(1) : raw;
    const column = columns.get(name);
    if (!column) {
      throw problem(
        `'${name}' cannot sort this list; it sorts on ${[...columns.keys()].join(', ')} (prefix - for descending). Sort on custom fields or related records with POST /<object>/query.`,
      );
    }
    return { ...column, desc };
  });
}

/**
 * Starts a page of `list`, whose rows the query calls `alias`. The cursor is checked at once, so a list
 * that looks up its parent after starting the page still refuses a foreign cursor before it says 404.
 * Keyset paging keeps a deep page as cheap as the first: the primary key index finds where it resumes.
 * With `sort` (`-value,created_at`: any column of the row, `-` for descending), rows come in that order,
 * ties by id, nulls last ascending and first descending, and the cursor carries the last row's keys; it is
 * bound to the order it came from.
 */
export function keysetPage<E extends ObjectLiteral & { id: string }>(
  cursors: CursorCodec,
  repository: Repository<E>,
  alias: string,
  list: string,
  query: { cursor?: string; limit?: number; sort?: string },
  options: KeysetOptions = {},
): KeysetPage<E> {
  if (query.sort) return sortedPage(cursors, repository, alias, list, query as typeof query & { sort: string });
  const after = cursors.decode(list, query.cursor, idKey());
  const size = pageSize(query);
  const qb = repository
    .createQueryBuilder(alias)
    .orderBy(`${alias}.id`, 'ASC')
    .limit(size + 1);
  if (after) qb.andWhere(`${alias}.id > :after`, { after });
  const unfiltered = qb.expressionMap.wheres.length;
  return {
    qb,
    read: async (present, prepare) => {
      // A join (one row per match) could repeat an id, which filteredRows's count of matches does not expect.
      const checked = options.rangeFiltered && qb.expressionMap.wheres.length > unfiltered && !qb.expressionMap.joinAttributes.length;
      const rows = checked ? await filteredRows(repository, alias, qb, after, size) : await qb.getMany();
      if (prepare) await prepare(rows);
      return toPage(cursors, list, rows, size, (row) => row.id, present);
    },
  };
}

/** How many ids past the cursor the first try of a filtered page reads (`filteredRows`). */
export const KEYSET_NEAR_ROWS = 5_000;
/** The most matches a filtered page reads through the filter's own index before it leaves the plan to PostgreSQL. */
export const KEYSET_MATCH_CAP = 20_000;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

const findNode = (node: PlanNode, test: (node: PlanNode) => boolean): PlanNode | undefined =>
  test(node) ? node : node.Plans?.map((child) => findNode(child, test)).find(Boolean);

/**
 * The rows `qb` (a filtered page: `ORDER BY id LIMIT size + 1`) reads, without trusting the planner's
 * guess of where its matches lie. Unless an index of the filter serves the page (then it runs as planned),
 * PostgreSQL walks the primary key expecting a page of matches soon; when matches are rare (a 2-row
 * `min_value`) or all far along the key (a recent `icp_scored_after`, one week a year ago), that walk reads
 * most of the table. When the planner expects more than KEYSET_MATCH_CAP matches, they are dense enough
 * for the walk to find a page soon, and the plain query runs as planned. Otherwise the page is, each step
 * one statement exact at its snapshot:
 * 1. the page among the next KEYSET_NEAR_ROWS ids: a full page there is the answer;
 * 2. every match, read in a CTE with no order or limit to tempt it back to the primary key (so through
 *    the filter's own index), then sorted; the answer unless the cap was reached;
 * 3. the plain query, when the estimate was wrong.
 */
async function filteredRows<E extends ObjectLiteral>(
  repository: Repository<E>,
  alias: string,
  qb: SelectQueryBuilder<E>,
  after: string | undefined,
  size: number,
): Promise<E[]> {
  const [sql, parameters] = qb.getQueryAndParameters();
  const [{ 'QUERY PLAN': plan }] = (await repository.manager.query(`EXPLAIN (FORMAT JSON) ${sql}`, parameters)) as Array<{
    'QUERY PLAN': Array<{ Plan: PlanNode }>;
  }>;
  // Every table's primary key is `<table> (id) PRIMARY KEY`, so PostgreSQL names its index `<table>_pkey`.
  const walk = findNode(plan[0].Plan, (node) => node['Node Type'] === 'Index Scan' && node['Index Name'] === `${repository.metadata.tableName}_pkey`);
  if (!walk || walk['Plan Rows'] > KEYSET_MATCH_CAP) return qb.getMany();
  const id = `${alias}.id`;
  const near = repository
    .createQueryBuilder('keyset_near')
    .select('keyset_near.id')
    .orderBy('keyset_near.id', 'ASC')
    .offset(KEYSET_NEAR_ROWS - 1)
    .limit(1);
  if (after) near.where('keyset_near.id > :after', { after });
  // Within KEYSET_NEAR_ROWS of the last id there is no bound and this finds nothing; the next step reads the few rows left.
  const rows = await qb.clone().andWhere(`${id} <= (${near.getQuery()})`, near.getParameters()).getMany();
  if (rows.length > size) return rows;
  const matches = qb
    .clone()
    .select(id, 'id')
    .orderBy()
    .limit(KEYSET_MATCH_CAP + 1);
  const { entities, raw } = await qb
    .clone()
    .addCommonTableExpression(matches, 'keyset_matches', { materialized: true })
    .andWhere(`${id} IN (SELECT id FROM keyset_matches ORDER BY id LIMIT ${size + 1})`)
    .addSelect('(SELECT count(*) FROM keyset_matches)', 'keyset_matched')
    .getRawAndEntities();
  if (!raw.length || Number((raw[0] as { keyset_matched: string }).keyset_matched) <= KEYSET_MATCH_CAP) return entities;
  return qb.getMany();
}

interface SortedCursor {
  k: Array<string | null>;
  id: string;
}

function sortedPage<E extends ObjectLiteral & { id: string }>(
  cursors: CursorCodec,
  repository: Repository<E>,
  alias: string,
  list: string,
  query: { cursor?: string; limit?: number; sort: string },
): KeysetPage<E> {
  const keys = sortKeys(repository, alias, query.sort);
  // A cursor names its list and order: one from another order of the same list is refused.
  const ordered = `${list}?sort=${query.sort}`;
  const cursor = cursors.decode(ordered, query.cursor, (value): value is SortedCursor => isSortedCursor(value, keys));
  const size = pageSize(query);
  const qb = repository.createQueryBuilder(alias).limit(size + 1);
  keys.forEach((key, i) => {
    qb.addOrderBy(key.sql, key.desc ? 'DESC' : 'ASC');
    qb.addSelect(`(${key.sql})::text`, `sort_key_${i}`);
  });
  qb.addOrderBy(`${alias}.id`, 'ASC');
  if (cursor !== undefined) {
    const params: Record<string, unknown> = {};
    const bind = (value: string, key: number | 'id') => {
      params[`sort_after_${key}`] = value;
      return key === 'id' ? `:sort_after_id` : `CAST(:sort_after_${key} AS ${keys[key].cast})`;
    };
    qb.andWhere(keysetAfter(keys, cursor.k, `${alias}.id`, bind, cursor.id), params);
  }
  return {
    qb,
    read: async (present, prepare) => {
      const { entities, raw: rawRows } = await qb.getRawAndEntities();
      const keysOf = new Map(
        rawRows.map((row: Record<string, unknown>) => [String(row[`${alias}_id`]), keys.map((_, i) => (row[`sort_key_${i}`] ?? null) as string | null)]),
      );
      if (prepare) await prepare(entities);
      return toPage(cursors, ordered, entities, size, (row) => ({ k: keysOf.get(row.id) ?? [], id: row.id }) satisfies SortedCursor, present);
    },
  };
}

/** A sorted list's cursor: one value per sort key, each one its column's type reads back, and the last row's id. */
function isSortedCursor(value: unknown, keys: readonly SortKey[]): value is SortedCursor {
  const c = value as Partial<SortedCursor> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    idKey()(c.id) &&
    Array.isArray(c.k) &&
    c.k.length === keys.length &&
    c.k.every((v, i) => v === null || (typeof v === 'string' && cursorValueFits(keys[i].cast, v)))
  );
}
