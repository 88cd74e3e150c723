import {
  apiNameOf,
  countWithinBudget,
  CursorCodec,
  cursorValueFits,
  CursorValueType,
  DomainError,
  ErrorCode,
  FieldIssue,
  fitPage,
  hydrate,
  idKey,
  invalidCursor,
  keysetAfter,
  PAGE_BYTE_BUDGET,
  validationFailed,
} from '@crm/common';
import {
  CustomFieldDefinition,
  DEFAULT_PAGE_SIZE,
  Page,
  QUERY_OPERATORS,
  QueryFieldInfo,
  QueryLimits,
  QueryOperator,
  RecordQueryDto,
  RemoteLookup,
  RemoteValuesReply,
} from '@crm/contracts';
import { createHash } from 'crypto';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import { QueryBudget, QueryRunOptions } from './query-budget';

/** `json` fields (metadata, all custom fields at once) can be returned but not filtered or sorted on. */
export type QueryFieldType = 'string' | 'enum' | 'number' | 'boolean' | 'datetime' | 'json';

/** One path a query may filter, sort or select on. */
export interface QueryField {
  /** The value as SQL, over the row alias or a join's alias. */
  sql: string;
  type: QueryFieldType;
  /** The allowed values of an enum. */
  values?: readonly string[];
  /** The join the path needs, by name (see QueryCatalog.joins). */
  join?: string;
  /** What is selected to return the path; `sql` when absent. */
  select?: string;
  /** An integer column: integer values are bound as bigint, so its btree index serves comparisons and sorts. */
  integer?: boolean;
  /** A text column whose lower() is indexed (unique emails, domains): equality also tests lower(), which that index serves. */
  folded?: boolean;
  /**
   * A custom field: its JSON column and name. Equality also tests `column @> {name: value}`, which the
   * column's GIN index (jsonb_path_ops) serves for every custom field at once.
   */
  contained?: { column: string; name: string };
}

/** Everything a query over one object may name: its table, fields, custom fields and one-hop relations. */
export interface QueryCatalog {
  /** The object's API name: what cursors and errors say. */
  object: string;
  /** `schema.table` of the object's rows. */
  table: string;
  alias: string;
  fields: ReadonlyMap<string, QueryField>;
  /** One-hop relations by name: the joined row's alias and its `LEFT JOIN …` clause, added when a path needs it. */
  joins: Readonly<Record<string, { alias: string; clause: string }>>;
  /** One-hop relations to records another service keeps, by name (see RemoteRelation). */
  remotes?: Readonly<Record<string, RemoteRelation>>;
  /** A condition every row must meet, when the table holds more than this object (one custom object's records); never a client's value. */
  scope?: string;
  /** An item when the query names no `fields`: the row (as the table holds it) in the object's list shape. */
  present(row: Record<string, unknown>): unknown;
}

/**
 * A relation to records another service keeps (deals to `contact.*`): conditions on its paths are answered
 * by that service as sets of ids (RemoteQueries.match), and its paths in `fields` are read from it by id.
 */
export interface RemoteRelation {
  /** The reference column of this object's row, as SQL (`d.contact_id`). */
  column: string;
  /** The object the owning service queries (`contacts`). */
  object: string;
  /** The service that keeps it. */
  via: 'contacts' | 'deals';
}

/** How a query reaches the services that keep the records of its remote relations; `waitMs` is how long it waits for the answer. */
export interface RemoteQueries {
  match(relation: RemoteRelation, prefix: string, lookups: RemoteLookup[], within: string[] | undefined, waitMs: number): Promise<string[][]>;
  values(relation: RemoteRelation, prefix: string, ids: string[], fields: Array<{ at: string; path: string }>, waitMs: number): Promise<RemoteValuesReply>;
  fields(relation: RemoteRelation, prefix: string): Promise<QueryFieldInfo[]>;
}

/** The operators a field of a type may use: text matching on text, order on ordered types, the rest on all; none on JSON. */
function operatorsFor(type: QueryFieldType): QueryOperator[] {
  if (type === 'json') return [];
  return QUERY_OPERATORS.filter((op) => (TEXT_OPERATORS.has(op) ? type === 'string' : ['$gt', '$gte', '$lt', '$lte'].includes(op) ? ORDERED.has(type) : true));
}

/**
 * Every path a query over the catalog may name, with its operators, enum values and whether it sorts,
 * the paths of remote relations included (asked of the services that keep them; a service that does not
 * answer leaves its paths out rather than failing the description).
 */
export async function describeQueryFields(catalog: QueryCatalog, remote?: RemoteQueries): Promise<QueryFieldInfo[]> {
  const local = [...catalog.fields].map(([path, field]): QueryFieldInfo => ({
    path,
    type: field.type,
    operators: operatorsFor(field.type),
    ...(field.values ? { values: field.values } : {}),
    sortable: field.type !== 'json',
  }));
  const related = await Promise.all(
    Object.entries(catalog.remotes ?? {}).map(async ([name, relation]) =>
      ((await remote?.fields(relation, name).catch(() => [])) ?? []).map((field) => ({ ...field, sortable: false })),
    ),
  );
  return [...local, ...related.flat()];
}

const CAST: Record<QueryFieldType, string> = { string: 'text', enum: 'text', number: 'numeric', boolean: 'boolean', datetime: 'timestamptz', json: 'jsonb' };
/** Most values of an `$in` on a custom field tested one containment each (an OR the GIN index serves as a BitmapOr). */
const CONTAINED_IN_VALUES = 20;
const ORDERED = new Set<QueryFieldType>(['string', 'enum', 'number', 'datetime']);
const TEXT_OPERATORS = new Set<QueryOperator>(['$contains', '$starts_with', '$ends_with']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** A SQL string literal for names the schema constrains (field names match FIELD_NAME_SHAPE) and ids the service made; never a filter value. */
export const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * The columns of an entity as query fields named as the API names them (`icpScore` is `icp_score`);
 * json columns can be returned but not compared (custom fields are compared through their definitions).
 */
export function entityFields(
  metadata: EntityMetadata,
  alias: string,
  options: { enums?: Record<string, readonly string[]>; exclude?: readonly string[]; folded?: readonly string[]; join?: string; prefix?: string } = {},
): [string, QueryField][] {
  const fields: [string, QueryField][] = [];
  for (const column of metadata.columns) {
    const api = apiNameOf(column.propertyName);
    if (options.exclude?.includes(api)) continue;
    const type = String(column.type);
    const kind: QueryFieldType | undefined = options.enums?.[api]
      ? 'enum'
      : type === 'text' || type === 'varchar' || type === 'char'
        ? 'string'
        : type === 'integer' || type === 'bigint' || type === 'numeric' || type === 'int' || type === 'double precision' || type === 'real'
          ? 'number'
          : type === 'boolean'
            ? 'boolean'
            : type === 'timestamptz' || type === 'timestamp with time zone'
              ? 'datetime'
              : type === 'jsonb'
                ? 'json'
                : undefined;
    if (!kind) continue;
    const sql = `${alias}.${column.databaseName}`;
    if (kind === 'json') {
      // Returned as the API shows it: an absent object is an empty one.
      fields.push([
        `${options.prefix ?? ''}${api}`,
        { sql, type: kind, select: `COALESCE(${sql}, '{}'::jsonb)`, ...(options.join ? { join: options.join } : {}) },
      ]);
      continue;
    }
    fields.push([
      `${options.prefix ?? ''}${api}`,
      {
        sql,
        type: kind,
        ...(options.enums?.[api] ? { values: options.enums[api] } : {}),
        ...(options.join ? { join: options.join } : {}),
        ...(['integer', 'int', 'bigint'].includes(type) ? { integer: true } : {}),
        ...(options.folded?.includes(api) ? { folded: true } : {}),
      },
    ]);
  }
  return fields;
}

/** `custom_fields.<name>` for each definition a query can compare: the stored JSON value, typed by its definition. */
export function customFields(definitions: readonly CustomFieldDefinition[], column: string, prefix = 'custom_fields.'): [string, QueryField][] {
  const fields: [string, QueryField][] = [];
  for (const def of definitions) {
    const json = `${column}->${quoted(def.name)}`;
    const text = `(${column}->>${quoted(def.name)})`;
    const typed = (jsonType: string, cast: string) => `(CASE WHEN jsonb_typeof(${json}) = '${jsonType}' THEN ${text}::${cast} END)`;
    const path = `${prefix}${def.name}`;
    const contained = { column, name: def.name };
    // Dates and date-times are kept as the RFC 3339 text they were written as, which orders as they do.
    if (def.type === 'number' || def.type === 'currency') fields.push([path, { sql: typed('number', 'numeric'), type: 'number', select: json, contained }]);
    else if (def.type === 'boolean') fields.push([path, { sql: typed('boolean', 'boolean'), type: 'boolean', select: json, contained }]);
    else if (def.type === 'enum') fields.push([path, { sql: typed('string', 'text'), type: 'enum', values: def.enum_values ?? [], select: json, contained }]);
    else if (def.type !== 'array') fields.push([path, { sql: typed('string', 'text'), type: 'string', select: json, contained }]);
  }
  return fields;
}

interface Cursor {
  q: string;
  k: Array<string | null>;
  id: string;
}

/** Builds the SQL of one query, binding every value as a parameter; collects every problem it finds. */
class QueryBuilder {
  readonly params: unknown[] = [];
  readonly issues: FieldIssue[] = [];
  readonly joins = new Set<string>();
  /** Conditions on remote relations, each with the parameter its ids are bound to once the owner answers. */
  readonly lookups: Array<{ relation: string; lookup: RemoteLookup; param: number }> = [];
  private conditions = 0;

  constructor(private readonly catalog: QueryCatalog) {}

  bind(value: unknown, type: QueryFieldType | 'text[]', array = false): string {
    this.params.push(value);
    const cast = type === 'text[]' ? 'text[]' : `${CAST[type]}${array ? '[]' : ''}`;
    return `$${this.params.length}::${cast}`;
  }

  /**
   * A field's value as a parameter of the column's own type where it can be: integers against an integer
   * column bind as bigint, so the comparison stays on the column and its index; anything else as bind().
   */
  bindFor(field: Pick<QueryField, 'type' | 'integer'>, value: unknown, array = false): string {
    const integral = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v);
    const asInteger = field.integer && (array ? (value as unknown[]).every(integral) : integral(value) || (typeof value === 'string' && /^-?\d+$/.test(value)));
    if (!asInteger) return this.bind(value, field.type, array);
    this.params.push(value);
    return `$${this.params.length}::bigint${array ? '[]' : ''}`;
  }

  field(path: string, at: string): QueryField | undefined {
    const field = this.catalog.fields.get(path);
    if (!field) {
      const known = [...this.catalog.fields.keys()];
      const shown = known.slice(0, 40).join(', ') + (known.length > 40 ? ', …' : '');
      this.issue(at, 'unknown_field', `'${path}' is not a field of ${this.catalog.object}; fields are: ${shown}`);
      return undefined;
    }
    if (field.join) this.joins.add(field.join);
    return field;
  }

  /** The remote relation a path goes through, if it does (`contact` of `contact.email`). */
  remote(path: string): string | undefined {
    return remoteRelationOf(this.catalog, path);
  }

  issue(field: string, code: string, message: string): void {
    this.issues.push({ field, code, message });
  }

  /** The filter as a boolean SQL expression that is never NULL, so `$not` is its exact complement (see known). */
  filter(node: unknown, at: string, depth: number): string {
    if (depth > QueryLimits.depth) {
      this.issue(at, 'too_deep', `the filter nests more than ${QueryLimits.depth} levels`);
      return 'TRUE';
    }
    if (!isPlainObject(node)) {
      this.issue(at, 'invalid_value', `${at} must be an object`);
      return 'TRUE';
    }
    const parts: string[] = [];
    // Conditions on one remote relation in one object hold for the same related record, so they go to its service together.
    const remote = new Map<string, Record<string, unknown>>();
    for (const [key, value] of Object.entries(node)) {
      const here = `${at}.${key}`;
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(value) || value.length === 0) {
          this.issue(here, 'invalid_value', `${key} takes a non-empty array of expressions`);
          continue;
        }
        const inner = value.map((item, i) => this.filter(item, `${here}.${i}`, depth + 1));
        parts.push(`(${inner.join(key === '$and' ? ' AND ' : ' OR ')})`);
      } else if (key === '$not') {
        parts.push(`NOT (${this.filter(value, here, depth + 1)})`);
      } else if (key.startsWith('$')) {
        this.issue(here, 'unknown_operator', `'${key}' is not an operator here; use $and, $or, $not, or a field path`);
      } else if (this.remote(key)) {
        const relation = this.remote(key)!;
        remote.set(relation, { ...remote.get(relation), [key]: value });
      } else {
        const field = this.field(key, here);
        if (!field) continue;
        if (isOperatorObject(value)) for (const [op, operand] of Object.entries(value)) parts.push(this.condition(field, op, operand, `${here}.${op}`));
        // A literal is shorthand for $eq, and its problems are named at the field itself.
        else parts.push(this.condition(field, '$eq', value, here));
      }
    }
    for (const [relation, filter] of remote) parts.push(this.remoteCondition(relation, filter, at));
    return parts.length ? parts.join(' AND ') : 'TRUE';
  }

  /**
   * A condition on a remote relation tests this row's reference column against the ids its owner answers
   * with. When the condition also holds for no record at all (`contact.email: null`, `$ne`), the owner
   * answers with the records it does not match and the test is negated, so that rows without a relation,
   * or whose related record was just deleted, are matched exactly as a join would match them.
   */
  private remoteCondition(relation: string, filter: Record<string, unknown>, at: string): string {
    for (const value of Object.values(filter)) {
      const uses = isOperatorObject(value) ? Object.keys(value).length : 1;
      for (let i = 0; i < uses; i++)
        if (++this.conditions === QueryLimits.conditions + 1)
          this.issue(at, 'too_many_conditions', `a filter may have at most ${QueryLimits.conditions} conditions`);
    }
    const negate = Object.values(filter).every(matchesNull);
    this.params.push([]);
    this.lookups.push({ relation, lookup: { at, filter, negate }, param: this.params.length - 1 });
    const column = this.catalog.remotes![relation].column;
    const hit = known(column, `${column} = ANY($${this.params.length}::text[])`);
    return negate ? `(NOT ${hit})` : hit;
  }

  private condition(field: QueryField, op: string, operand: unknown, at: string): string {
    if (!(QUERY_OPERATORS as readonly string[]).includes(op)) {
      this.issue(at, 'unknown_operator', `'${op}' is not an operator; operators are ${QUERY_OPERATORS.join(', ')}`);
      return 'TRUE';
    }
    if (++this.conditions === QueryLimits.conditions + 1)
      this.issue(at, 'too_many_conditions', `a filter may have at most ${QueryLimits.conditions} conditions`);
    const x = field.sql;
    const operator = op as QueryOperator;
    if (field.type === 'json') {
      this.issue(at, 'invalid_operator', `a whole JSON field cannot be compared; filter on one of its values (custom_fields.<name>)`);
      return 'TRUE';
    }
    if (!operatorsFor(field.type).includes(operator)) return this.misfit(at, operator, field);
    switch (operator) {
      case '$exists':
        if (typeof operand !== 'boolean') return this.wrong(at, 'true or false');
        return operand ? `(${x} IS NOT NULL)` : `(${x} IS NULL)`;
      case '$eq':
      case '$ne': {
        if (operand === null) return op === '$eq' ? `(${x} IS NULL)` : `(${x} IS NOT NULL)`;
        const value = this.literal(field, operand, at);
        if (value === undefined) return 'TRUE';
        const p = this.bindFor(field, value);
        if (op === '$ne') return `(${x} IS DISTINCT FROM ${p})`;
        // lower() first, so the index on lower(x) finds the row; the exact test keeps equality case-sensitive.
        if (field.folded) return known(x, `lower(${x}) = lower(${p}) AND ${x} = ${p}`);
        return field.contained ? known(x, `${this.containing(field.contained, [value])} AND ${x} = ${p}`) : known(x, `${x} = ${p}`);
      }
      case '$in':
      case '$nin': {
        if (!Array.isArray(operand)) return this.wrong(at, 'an array of values');
        if (operand.length > QueryLimits.inValues) {
          this.issue(at, 'too_many_values', `${op} takes at most ${QueryLimits.inValues} values`);
          return 'TRUE';
        }
        const values = operand.filter((v) => v !== null).map((v, i) => this.literal(field, v, `${at}.${i}`));
        if (values.some((v) => v === undefined)) return 'TRUE';
        const p = this.bindFor(field, values, true);
        const indexed =
          op !== '$in' || !values.length
            ? undefined
            : field.folded
              ? `lower(${x}) = ANY(${this.bind(
                  (values as string[]).map((v) => v.toLowerCase()),
                  'string',
                  true,
                )})`
              : field.contained && values.length <= CONTAINED_IN_VALUES
                ? this.containing(field.contained, values)
                : undefined;
        const anyOf = known(x, indexed ? `${indexed} AND ${x} = ANY(${p})` : `${x} = ANY(${p})`);
        const matches = operand.includes(null) ? `(${anyOf} OR ${x} IS NULL)` : anyOf;
        return op === '$in' ? matches : `NOT ${matches}`;
      }
      case '$contains':
      case '$starts_with':
      case '$ends_with': {
        if (typeof operand !== 'string') return this.wrong(at, 'a string');
        const escaped = operand.replace(/[\\%_]/g, (c) => `\\${c}`);
        const pattern = op === '$contains' ? `%${escaped}%` : op === '$starts_with' ? `${escaped}%` : `%${escaped}`;
        return known(x, `${x} ILIKE ${this.bind(pattern, 'string')}`);
      }
      default: {
        // Comparisons never match null, as in MongoDB.
        if (operand === null) return this.wrong(at, `a value (${op} never matches null)`);
        const value = this.literal(field, operand, at);
        if (value === undefined) return 'TRUE';
        const sign = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op as '$gt'];
        return known(x, `${x} ${sign} ${this.bindFor(field, value)}`);
      }
    }
  }

  /**
   * `column @> {name: v1} OR column @> {name: v2} …`: implied by the typed equality beside it (a JSON number,
   * string or boolean equal to the value), and what a GIN index on the column answers.
   */
  private containing(contained: { column: string; name: string }, values: unknown[]): string {
    const tests = values.map((value) => `${contained.column} @> ${this.bind(JSON.stringify({ [contained.name]: value }), 'json')}`);
    return tests.length === 1 ? tests[0] : `(${tests.join(' OR ')})`;
  }

  private misfit(at: string, op: string, field: QueryField): string {
    this.issue(at, 'invalid_operator', `${op} does not apply to a ${field.type} field`);
    return 'TRUE';
  }

  private wrong(at: string, expected: string): string {
    this.issue(at, 'invalid_value', `${at} must be ${expected}`);
    return 'TRUE';
  }

  /** The value as it is bound, or undefined (with an issue) when it does not fit the field's type. */
  literal(field: QueryField, value: unknown, at: string): unknown {
    switch (field.type) {
      case 'string':
        if (typeof value === 'string') return value;
        break;
      case 'enum':
        if (typeof value === 'string' && field.values?.includes(value)) return value;
        if (typeof value === 'string') {
          this.issue(at, 'invalid_value', `${at} must be one of ${field.values?.join(', ')}`);
          return undefined;
        }
        break;
      case 'number':
        if (typeof value === 'number' && Number.isFinite(value)) return value;
        break;
      case 'boolean':
        if (typeof value === 'boolean') return value;
        break;
      case 'datetime':
        if (typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value))) return value;
        this.issue(at, 'invalid_value', `${at} must be an RFC 3339 date-time`);
        return undefined;
    }
    this.issue(at, 'invalid_value', `${at} must be a ${field.type}`);
    return undefined;
  }
}

/**
 * A comparison that is false, not NULL, where the field is null, so that NOT of it is its exact
 * complement. Written as an AND rather than COALESCE so that an index on the field still serves it.
 */
function known(x: string, comparison: string): string {
  return `(${comparison} AND ${x} IS NOT NULL)`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{$gt: 5}` rather than a literal: a non-empty object whose keys are all operators. */
function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => k.startsWith('$'));
}

/** Whether a field's condition holds where the field is null, by the semantics `condition` compiles. */
function matchesNull(value: unknown): boolean {
  const operators = isOperatorObject(value) ? Object.entries(value) : [['$eq', value] as const];
  return operators.every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return operand === null;
      case '$ne':
        return operand !== null;
      case '$in':
        return Array.isArray(operand) && operand.includes(null);
      case '$nin':
        return Array.isArray(operand) && !operand.includes(null);
      case '$exists':
        return operand === false;
      default:
        return false;
    }
  });
}

/** A value as the API shows it: date-times as RFC 3339, numbers (numeric arrives as text) as numbers. */
function shown(field: QueryField, value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : field.type === 'number' && typeof value === 'string' ? Number(value) : value;
}

/** The remote relation a path goes through (`contact` of `contact.email`, `values.deal` of `values.deal.name`), if any. */
function remoteRelationOf(catalog: QueryCatalog, path: string): string | undefined {
  return Object.keys(catalog.remotes ?? {}).find((name) => path.startsWith(`${name}.`));
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
 * A filter as one SQL boolean expression over the catalog's alias and joins, with its values as
 * parameters (a remote condition's ids left empty, to be bound once its service answers); a
 * `validation_failed` naming every bad path otherwise.
 */
export function compileFilter(
  catalog: QueryCatalog,
  filter: unknown,
): { where: string; params: unknown[]; joins: string[]; lookups: Array<{ relation: string } & RemoteLookup> } {
  const q = new QueryBuilder(catalog);
  const where = q.filter(filter, 'filter', 1);
  if (q.issues.length) throw validationFailed(q.issues);
  return { where, params: q.params, joins: [...q.joins], lookups: q.lookups.map(({ relation, lookup }) => ({ relation, ...lookup })) };
}

/** A WHERE condition within the catalog's scope. */
function scoped(catalog: QueryCatalog, condition: string): string {
  return catalog.scope ? `(${catalog.scope}) AND (${condition})` : `(${condition})`;
}

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
  const q = new QueryBuilder(catalog);
  const where = query.filter === undefined ? 'TRUE' : q.filter(query.filter, 'filter', 1);
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
  const issues = [...q.issues];
  if (q.lookups.length) {
    // Only when the local filter is valid: the candidates are found with it.
    const within = issues.length ? new Map<string, string[]>() : await candidateReferences(dataSource, catalog, query.filter, q.lookups, options, budget);
    issues.push(...(await resolveLookups(q, catalog, within, options.remote, budget)));
  }
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
  const joins = [...q.joins].map((name) => catalog.joins[name].clause).join(' ');
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
      put(item, path, shown(field!, row[`~f${i}`]));
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

function remoteOf(remote: RemoteQueries | undefined): RemoteQueries {
  if (!remote) throw new Error('this catalog has remote relations: pass QueryRunOptions.remote');
  return remote;
}

/**
 * The filter's top-level conditions that hold every row of the answer and name no remote relation: a
 * remote condition needs to be right only for rows these select, so the other service may be asked about
 * just the records those rows reference.
 */
function localConjuncts(filter: unknown, catalog: QueryCatalog): Record<string, unknown>[] {
  if (!isPlainObject(filter)) return [];
  const remote = (node: unknown): boolean =>
    Array.isArray(node)
      ? node.some(remote)
      : isPlainObject(node) &&
        Object.entries(node).some(([key, value]) => (key.startsWith('$') ? remote(value) : remoteRelationOf(catalog, key) !== undefined));
  return Object.entries(filter).flatMap(([key, value]) =>
    key === '$and' && Array.isArray(value) ? value.flatMap((item) => localConjuncts(item, catalog)) : remote({ [key]: value }) ? [] : [{ [key]: value }],
  );
}

/**
 * For each remote relation, the ids its column holds among the rows the local part of the filter selects,
 * when there are few enough to send: the owning service then tests only those, so a broad condition on
 * the related records (`contact.stage: "customer"`) stays answerable within a narrow query.
 */
async function candidateReferences(
  dataSource: DataSource,
  catalog: QueryCatalog,
  filter: unknown,
  lookups: QueryBuilder['lookups'],
  options: QueryRunOptions,
  budget: QueryBudget,
): Promise<Map<string, string[]>> {
  const max = options.relatedIdsMax ?? QueryLimits.relatedIds;
  const guard = new QueryBuilder(catalog);
  const where = guard.filter({ $and: [{}, ...localConjuncts(filter, catalog)] }, 'filter', 1);
  const joins = [...guard.joins].map((name) => catalog.joins[name].clause).join(' ');
  const relations = [...new Set(lookups.map((l) => l.relation))];
  const found = await budget.run(dataSource, (run) =>
    run(
      eachInOne(
        relations.map((relation) => {
          const column = catalog.remotes![relation].column;
          return `SELECT DISTINCT ${column} AS ref FROM ${catalog.table} ${catalog.alias} ${joins} WHERE ${scoped(catalog, where)} AND ${column} IS NOT NULL LIMIT ${max + 1}`;
        }),
      ),
      guard.params,
    ),
  );
  const within = new Map<string, string[]>();
  byPart(found, relations.length).forEach((refs, i) => {
    if (refs.length <= max)
      within.set(
        relations[i],
        refs.map((row) => String(row.ref)),
      );
  });
  return within;
}

/**
 * Several SELECTs as one statement, each row tagged `~n` with the index of the SELECT it came from: a set
 * of lookups costs one round trip and runs under one statement timeout, each keeping its own plan and LIMIT.
 */
function eachInOne(selects: readonly string[]): string {
  return selects.map((select, i) => `(SELECT ${i} AS "~n", part.* FROM (${select}) part)`).join(' UNION ALL ');
}

/** The rows of an eachInOne statement, by the SELECT they came from. */
function byPart(rows: ReadonlyArray<Record<string, unknown>>, parts: number): Array<Array<Record<string, unknown>>> {
  const grouped = Array.from({ length: parts }, () => [] as Array<Record<string, unknown>>);
  for (const row of rows) grouped[row['~n'] as number].push(row);
  return grouped;
}

/**
 * Asks the owning services for the ids of each remote condition (one call per relation) and binds them
 * into their parameters; answers the problems they found with those conditions.
 */
async function resolveLookups(
  q: QueryBuilder,
  catalog: QueryCatalog,
  within: ReadonlyMap<string, string[]>,
  remote: RemoteQueries | undefined,
  budget: QueryBudget,
): Promise<FieldIssue[]> {
  const byRelation = new Map<string, QueryBuilder['lookups']>();
  for (const lookup of q.lookups) byRelation.set(lookup.relation, [...(byRelation.get(lookup.relation) ?? []), lookup]);
  const issues: FieldIssue[] = [];
  await Promise.all(
    [...byRelation].map(async ([relation, lookups]) => {
      try {
        const ids = await budget.ask((waitMs) =>
          remoteOf(remote).match(
            catalog.remotes![relation],
            relation,
            lookups.map((l) => l.lookup),
            within.get(relation),
            waitMs,
          ),
        );
        lookups.forEach((l, i) => (q.params[l.param] = ids[i]));
      } catch (err) {
        if (err instanceof DomainError && err.code === ErrorCode.ValidationFailed && err.details) issues.push(...err.details);
        else throw err;
      }
    }),
  );
  return issues;
}

/**
 * The ids of an object's records that match each condition another service's query put on them (or, for a
 * negated condition, that do not), at most QueryRunOptions.relatedIdsMax each: past that, a 400 that says how to
 * narrow the condition. The catalog names its paths as the asking query does (`contact.email`).
 */
export async function matchRecordIds(
  dataSource: DataSource,
  catalog: QueryCatalog,
  lookups: readonly RemoteLookup[],
  within: readonly string[] | undefined,
  options: QueryRunOptions,
): Promise<string[][]> {
  const budget = new QueryBudget(options.timeoutMs);
  const max = options.relatedIdsMax ?? QueryLimits.relatedIds;
  // One builder for every lookup, so that their parameters number apart and they run as one statement.
  const q = new QueryBuilder(catalog);
  const among = within ? ` AND ${catalog.alias}.id = ANY(${q.bind(within, 'text[]')})` : '';
  const selects = lookups.map((lookup) => {
    const where = q.filter(lookup.filter, lookup.at, 1);
    const tested = lookup.negate ? `NOT (${where})` : where;
    return `SELECT ${catalog.alias}.id FROM ${catalog.table} ${catalog.alias} WHERE ${scoped(catalog, tested)}${among} LIMIT ${max + 1}`;
  });
  const issues: FieldIssue[] = [...q.issues];
  if (issues.length) throw validationFailed(issues);
  const rows = selects.length ? await budget.run(dataSource, (run) => run(eachInOne(selects), q.params)) : [];
  const answers = byPart(rows, lookups.length);
  // The ids of all the conditions travel back in one message: together they must fit in it too.
  let bytes = 0;
  answers.forEach((rows, i) => {
    bytes += rows.reduce((sum, row) => sum + String(row.id).length + 3, 0);
    if (rows.length <= max && bytes > PAGE_BYTE_BUDGET && !issues.some((issue) => issue.code === 'too_many_matches')) {
      issues.push({
        field: lookups[i].at,
        code: 'too_many_matches',
        message: `the conditions on ${catalog.object} in this filter together match more of them than one answer between services can carry: make them more selective, combine them, or narrow the rest of the filter with conditions ANDed at its top level`,
      });
    }
    if (rows.length <= max) return;
    const { at, filter, negate } = lookups[i];
    const paths = Object.keys(filter).join(' and ');
    issues.push({
      field: at,
      code: 'too_many_matches',
      message: negate
        ? `${paths} also holds where there is no related record, so it is answered by the ${catalog.object} it does not match, and more than ${max} do not: state what the related record is rather than what it is not (an $eq or $in on one of its fields), or narrow the rest of the filter with conditions ANDed at its top level`
        : `${paths} matches more than ${max} ${catalog.object}, the most a condition on records another service keeps may match when the rest of the filter leaves more than that many to choose from: make it more selective (an exact value, a shorter range, a further condition on the same record in the same object), or narrow the rest of the filter with conditions ANDed at its top level`,
    });
  });
  if (issues.length) throw validationFailed(issues);
  return answers.map((rows) => rows.map((row) => String(row.id)));
}

/** The values of an object's records at the paths another service's query returns, by record id. */
export async function pickRecordValues(
  dataSource: DataSource,
  catalog: QueryCatalog,
  ids: readonly string[],
  paths: ReadonlyArray<{ at: string; path: string }>,
  options: QueryRunOptions,
): Promise<RemoteValuesReply> {
  const q = new QueryBuilder(catalog);
  const fields = paths.map(({ at, path }) => ({ path, field: q.field(path, at) }));
  if (q.issues.length) throw validationFailed(q.issues);
  if (!ids.length) return { records: {}, delivered: 0 };
  const a = catalog.alias;
  const sql = `SELECT ${a}.id AS id, ${fields.map(({ field }, i) => `${field!.select ?? field!.sql} AS "~f${i}"`).join(', ')} FROM ${catalog.table} ${a} WHERE ${scoped(catalog, `${a}.id = ANY($1::text[])`)}`;
  const rows = await new QueryBudget(options.timeoutMs).run(dataSource, (run) => run(sql, [ids]));
  const found = new Map(rows.map((row) => [String(row.id), Object.fromEntries(fields.map(({ path, field }, i) => [path, shown(field!, row[`~f${i}`])]))]));
  // In the order asked, as many as fit in one reply (at least one): the asking query ends its page there.
  const delivered = countWithinBudget(
    ids.map((id) => found.get(id) ?? null),
    PAGE_BYTE_BUDGET,
  );
  const records: Record<string, Record<string, unknown>> = {};
  for (const id of ids.slice(0, delivered)) if (found.has(id)) records[id] = found.get(id)!;
  return { records, delivered };
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

/**
 * An object's own fields and custom fields named as another service's query names them through its
 * relation (`contact.email` for the `contact` of a deal): what that query may filter on and return, one hop away.
 */
export function relatedCatalogOf(
  dataSource: DataSource,
  spec: Pick<CatalogSpec, 'entity' | 'alias' | 'enums' | 'exclude' | 'folded' | 'customFields'> & { object: string },
  prefix: string,
): QueryCatalog {
  const metadata = dataSource.getMetadata(spec.entity);
  const fields = entityFields(metadata, spec.alias, { enums: spec.enums, exclude: spec.exclude, folded: spec.folded, prefix: `${prefix}.` });
  if (spec.customFields) fields.push(...customFields(spec.customFields, `${spec.alias}.custom_fields`, `${prefix}.custom_fields.`));
  return { object: spec.object, table: metadata.tablePath, alias: spec.alias, fields: new Map(fields), joins: {}, present: (row) => row };
}

/** One kind of row a catalog reads: its entity, what its rows are called in SQL, and its enums. */
export interface QueryTable {
  entity: EntityTarget<ObjectLiteral>;
  alias: string;
  enums?: Record<string, readonly string[]>;
  /** API fields of the entity that are not part of its get shape. */
  exclude?: readonly string[];
  /** Text fields whose lower() is indexed (see QueryField.folded). */
  folded?: readonly string[];
}

export interface CatalogSpec extends QueryTable {
  object: string;
  /** The object's list presenter, over its entity. */
  present(row: never): unknown;
  /** The object's custom field definitions, when it has custom fields. */
  customFields?: readonly CustomFieldDefinition[];
  /** One-hop relations: the path prefix, the table it reaches, and the column of this row that holds its id. */
  relations?: Array<{ name: string; table: QueryTable; column: string }>;
  /** One-hop relations to another service's records: the path prefix, the column of this row that holds its id, and who keeps it. */
  remotes?: Array<{ name: string; column: string } & Omit<RemoteRelation, 'column'>>;
}

/**
 * A catalog from entities: every column of the object's get shape as the API names it, its custom fields,
 * and the scalar fields of each record one hop away (through a LEFT JOIN added only when a path needs it).
 */
export function catalogOf(dataSource: DataSource, spec: CatalogSpec): QueryCatalog {
  const metadata = dataSource.getMetadata(spec.entity);
  const fields = entityFields(metadata, spec.alias, { enums: spec.enums, exclude: spec.exclude, folded: spec.folded });
  if (spec.customFields) fields.push(...customFields(spec.customFields, `${spec.alias}.custom_fields`));
  const joins: Record<string, { alias: string; clause: string }> = {};
  const remotes: Record<string, RemoteRelation> = {};
  for (const { name, column, ...remote } of spec.remotes ?? []) remotes[name] = { ...remote, column: `${spec.alias}.${column}` };
  for (const relation of spec.relations ?? []) {
    const joined = `${spec.alias}_${relation.name}`;
    const target = dataSource.getMetadata(relation.table.entity);
    joins[relation.name] = { alias: joined, clause: `LEFT JOIN ${target.tablePath} ${joined} ON ${joined}.id = ${spec.alias}.${relation.column}` };
    const related = entityFields(target, joined, {
      enums: relation.table.enums,
      exclude: relation.table.exclude,
      folded: relation.table.folded,
      prefix: `${relation.name}.`,
      join: relation.name,
    });
    fields.push(...related.filter(([, field]) => field.type !== 'json'));
  }
  return {
    object: spec.object,
    table: metadata.tablePath,
    alias: spec.alias,
    fields: new Map(fields),
    joins,
    remotes,
    present: (row) => (spec.present as (entity: ObjectLiteral) => unknown)(hydrate(dataSource.manager, spec.entity, row)),
  };
}
