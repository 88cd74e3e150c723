import { CursorCodec, CursorValueType, cursorValueFits, fitPage, idKey, invalidCursor, keysetAfter, validationFailed } from '@crm/common';
import { DEFAULT_PAGE_SIZE, Page, RecordQueryDto } from '@crm/contracts';
import { createHash } from 'crypto';
import { DataSource } from 'typeorm';
import { FilterCompiler, isPlainObject } from './filter-compiler';
import { QueryBudget, QueryRunOptions } from './query-budget';
import { QueryCatalog, QueryField, scoped, shownValue } from './query-catalog';
import { remoteOf, resolveRemoteConditions } from './remote-matching';

interface Cursor {
  q: string;
  k: Array<string | null>;
  id: string;
}

/**
 * Where an API path's value goes in an item: `custom_fields.x` nests as `custom_fields: {x}`, `company.name`
 * as `company: {name}`, `values.owner.email` as `values: {owner: {email}}`. Field names have no dots.
 */
function put(item: Record<string, unknown>, path: string, value: unknown): void {
  const steps = path.split('.');
  let at = item;
  for (const step of steps.slice(0, -1)) {
    // A related record's paths replace the bare id a whole `values` object holds for it.
    if (!isPlainObject(at[step])) at[step] = {};
    at = at[step] as Record<string, unknown>;
  }
  at[steps[steps.length - 1]] = value;
}

/** An item of a query's answer: the object's list shape, or `id` and the paths the query named. */
export type QueryItem = { id: string } & Record<string, unknown>;

/**
 * Runs `POST /<object>/query` over a catalog: validates the filter, sort and fields against it (every
 * problem in one `validation_failed`, naming its path), compiles them to one SQL statement whose values
 * are all bound parameters, and pages with a keyset cursor that carries the sort keys and is bound to the
 * query it came from. Its statements and the lookups other services answer for it share one budget
 * (QueryBudget), so a query no index serves cannot hold a connection or slow the others for long.
 */
export async function runRecordQuery(
  dataSource: DataSource,
  catalog: QueryCatalog,
  query: RecordQueryDto,
  options: QueryRunOptions,
  cursors: CursorCodec,
): Promise<Page<QueryItem>> {
  const budget = new QueryBudget(options.timeoutMs);
  const q = new FilterCompiler(catalog);
  const where = query.filter === undefined ? 'TRUE' : q.filter(query.filter);
  const sort = (query.sort ?? []).map((key, i) => {
    const at = `sort.${i}.field`;
    const relation = q.remote(key.field);
    if (relation) {
      q.issue(
        at,
        'invalid_value',
        `'${key.field}' is kept by another service and cannot be sorted on; sort on the reference field or on this object's own fields`,
      );
      return { field: undefined, desc: false };
    }
    const field = q.field(key.field, at);
    if (field?.type === 'json') q.issue(at, 'invalid_value', `'${key.field}' is a JSON object and has no order; sort on one of its values`);
    return { field, desc: key.direction === 'desc' };
  });
  const selected = (query.fields ?? []).map((path, i) => {
    const at = `fields.${i}`;
    const relation = q.remote(path);
    return relation ? { path, at, relation, field: undefined } : { path, at, relation, field: q.field(path, at) };
  });
  // Remote conditions are checked even when local ones are wrong, so one answer names every problem.
  const issues = [...q.issues, ...(await resolveRemoteConditions(dataSource, catalog, q, query.filter, options, budget))];
  if (issues.length) throw validationFailed(issues);
  const remoteSelected = new Set(selected.flatMap((s) => (s.relation ? [s.relation] : [])));

  const a = catalog.alias;
  const keys = sort.map((s) => ({ sql: s.field!.sql, type: s.field!.type, integer: s.field!.integer, desc: s.desc }));
  const digest = createHash('sha256')
    .update(JSON.stringify({ o: catalog.object, f: query.filter ?? null, s: query.sort ?? [], p: query.fields ?? null }))
    .digest('base64url')
    .slice(0, 22);
  let after = 'TRUE';
  const list = `${catalog.object}/query`;
  const cursor = cursors.decode(list, query.cursor, (value): value is Cursor => isCursor(value, keys));
  if (cursor) {
    if (cursor.q !== digest) throw invalidCursor('cursor belongs to a different query: send the same filter, sort and fields, or start without a cursor');
    // The cursor's keys are bound as text and cast back to their fields' types.
    after = keysetAfter(keys, cursor.k, `${a}.id`, (value, key) => (key === 'id' ? q.bind(value, 'string') : q.bindFor(keys[key], value)), cursor.id);
  }
  const size = query.limit ?? DEFAULT_PAGE_SIZE;
  // Without `fields`, the whole row, for the object's own list presenter; the names ours take start with `~` so they meet no column.
  const columns = [
    query.fields ? `${a}.id AS id` : `${a}.*`,
    ...selected.flatMap(({ field }, i) => (field ? [`${field.select ?? field.sql} AS "~f${i}"`] : [])),
    ...[...remoteSelected].map((relation) => `${catalog.remotes![relation].column} AS "~r_${relation}"`),
    ...keys.map((k, i) => `(${k.sql})::text AS "~k${i}"`),
    ...[...q.joins].map((join) => `${catalog.joins[join].alias}.id AS "~j_${join}"`),
  ];
  const order = [...keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`), `${a}.id ASC`];
  const joins = q.joinClauses();
  const sql = `SELECT ${columns.join(', ')} FROM ${catalog.table} ${a} ${joins} WHERE ${scoped(catalog, where)} AND (${after}) ORDER BY ${order.join(', ')} LIMIT ${size + 1}`;

  const rows = await budget.run(dataSource, (run) => run(sql, q.params));

  let pageRows = rows.slice(0, size);
  const related = new Map<string, Record<string, Record<string, unknown>>>();
  for (const relation of remoteSelected) {
    const ids = [...new Set(pageRows.map((row) => row[`~r_${relation}`]).filter((id): id is string => typeof id === 'string'))];
    const fields = selected.filter((s) => s.relation === relation).map(({ at, path }) => ({ at, path }));
    // Asked even for an empty page, so that a path the other service does not know is a 400 on every page.
    const answer = await budget.ask((waitMs) => remoteOf(options.remote).values(catalog.remotes![relation], relation, ids, fields, waitMs));
    related.set(relation, answer.records);
    // The other service answers as many records as fit in one message; the page ends before the first row it could not describe.
    if (answer.delivered < ids.length) {
      const undelivered = new Set(ids.slice(answer.delivered));
      pageRows = pageRows.slice(
        0,
        Math.max(
          1,
          pageRows.findIndex((row) => undelivered.has(row[`~r_${relation}`] as string)),
        ),
      );
    }
  }
  const presented = pageRows.map((row) => {
    if (!query.fields) return catalog.present(row) as QueryItem;
    const item: QueryItem = { id: String(row.id) };
    selected.forEach(({ path, field, relation }, i) => {
      if (relation) {
        const record = related.get(relation)![row[`~r_${relation}`] as string];
        if (record) put(item, path, record[path]);
        else put(item, relation, null);
        return;
      }
      // A relation with no row is null, not an object of nulls.
      const join = field!.join;
      if (join && row[`~j_${join}`] === null) {
        put(item, join, null);
        return;
      }
      put(item, path, shownValue(field!, row[`~f${i}`]));
    });
    return item;
  });
  // A page travels back as one NATS message: it ends early, with a cursor, rather than outgrow it.
  const { items, hasMore } = fitPage(presented, size, rows.length > pageRows.length);
  const page: Page<QueryItem> = { data: items, has_more: hasMore };
  if (page.has_more) {
    const last = pageRows[items.length - 1];
    const resume: Cursor = { q: digest, k: keys.map((_, i) => (last[`~k${i}`] ?? null) as string | null), id: String(last.id) };
    page.next_cursor = cursors.encode(list, resume);
  }
  return page;
}

/** The type a sort key's value is read back as: the one bindFor binds it with. */
function cursorTypeOf(key: Pick<QueryField, 'type' | 'integer'>): CursorValueType {
  if (key.type === 'number') return key.integer ? 'bigint' : 'numeric';
  return key.type === 'boolean' ? 'boolean' : key.type === 'datetime' ? 'timestamptz' : 'text';
}

/** A query's cursor: its digest, one value per sort key that the key's type reads back, and the last record's id. */
function isCursor(value: unknown, keys: ReadonlyArray<Pick<QueryField, 'type' | 'integer'>>): value is Cursor {
  if (!isPlainObject(value)) return false;
  const c = value as Partial<Cursor>;
  return (
    typeof c.q === 'string' &&
    idKey()(c.id) &&
    Array.isArray(c.k) &&
    c.k.length === keys.length &&
    c.k.every((v, i) => v === null || (typeof v === 'string' && cursorValueFits(cursorTypeOf(keys[i]), v)))
  );
}
