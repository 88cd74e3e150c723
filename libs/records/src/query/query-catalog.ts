import { apiNameOf, hydrate } from '@crm/common';
import { CustomFieldDefinition, QUERY_OPERATORS, QueryFieldInfo, QueryOperator } from '@crm/contracts';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { RemoteQueries, RemoteRelation } from './remote-matching';

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
  /** A custom date: a string field whose literals must be calendar dates (YYYY-MM-DD), so that comparing them as text compares dates. */
  calendar?: true;
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
  /**
   * The permission resource each relation (a join or a remote, by name) reads, where a client's permissions
   * decide whether the query may enter it: a custom object's reference fields (`values.<ref>` reaches contacts).
   */
  relationResources?: Readonly<Record<string, string>>;
  /** A condition every row must meet, when the table holds more than this object (one custom object's records); never a client's value. */
  scope?: string;
  /** An item when the query names no `fields`: the row (as the table holds it) in the object's list shape. */
  present(row: Record<string, unknown>): unknown;
}

/** The operators a field of a type may use: text matching on text, order on ordered types, the rest on all; none on JSON. */
export function operatorsFor(type: QueryFieldType): QueryOperator[] {
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

const ORDERED = new Set<QueryFieldType>(['string', 'enum', 'number', 'datetime']);
const TEXT_OPERATORS = new Set<QueryOperator>(['$contains', '$starts_with', '$ends_with']);

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
    if (def.type === 'number' || def.type === 'currency') fields.push([path, { sql: typed('number', 'numeric'), type: 'number', select: json, contained }]);
    // Date-times are kept as the text they were written as, offset and all, and compared as the instants they
    // name; one written as another offset is another text, so containment cannot stand in for equality.
    else if (def.type === 'datetime') fields.push([path, { sql: `custom_instant(${json})`, type: 'datetime', select: json }]);
    // A calendar date has one spelling, YYYY-MM-DD, whose text orders as the date does; one that is not a date reads as null.
    else if (def.type === 'date')
      fields.push([path, { sql: `(CASE WHEN custom_date(${json}) IS NOT NULL THEN ${text} END)`, type: 'string', calendar: true, select: json, contained }]);
    else if (def.type === 'boolean') fields.push([path, { sql: typed('boolean', 'boolean'), type: 'boolean', select: json, contained }]);
    else if (def.type === 'enum') fields.push([path, { sql: typed('string', 'text'), type: 'enum', values: def.enum_values ?? [], select: json, contained }]);
    else if (def.type !== 'array') fields.push([path, { sql: typed('string', 'text'), type: 'string', select: json, contained }]);
  }
  return fields;
}

/** The remote relation a path goes through (`contact` of `contact.email`, `values.deal` of `values.deal.name`), if any. */
export function remoteRelationOf(catalog: QueryCatalog, path: string): string | undefined {
  return Object.keys(catalog.remotes ?? {}).find((name) => path.startsWith(`${name}.`));
}

/** The permission resource a path enters through one of the catalog's guarded relations, if it does. */
export function relationResourceOf(catalog: QueryCatalog, path: string): string | undefined {
  const guarded = catalog.relationResources;
  if (!guarded) return undefined;
  const relation = remoteRelationOf(catalog, path) ?? (catalog.fields.has(path) ? catalog.fields.get(path)!.join : undefined);
  return relation !== undefined && Object.hasOwn(guarded, relation) ? guarded[relation] : undefined;
}

/** A path of a catalog resolved to what a statement needs to read it (a filter, a GROUP BY, a metric). */
export type ResolvedPath =
  | {
      kind: 'local';
      path: string;
      field: QueryField;
      /** The value as SQL, for conditions, grouping and ordering. */
      sql: string;
      /** What to select to return the value as the API shows it. */
      select: string;
      type: QueryFieldType;
      /** The join the path needs, when it is on a record one hop away. */
      join?: { name: string; alias: string; clause: string };
    }
  /** A path on a record another service keeps: no SQL here; its owner answers for it (RemoteQueries). */
  | { kind: 'remote'; path: string; relation: string; remote: RemoteRelation };

/** One path of a catalog: its SQL expression, type and the join it needs, or its remote relation; undefined when the catalog has no such path. */
export function resolvePath(catalog: QueryCatalog, path: string): ResolvedPath | undefined {
  const relation = remoteRelationOf(catalog, path);
  if (relation) return { kind: 'remote', path, relation, remote: catalog.remotes![relation] };
  const field = catalog.fields.get(path);
  if (!field) return undefined;
  const join = field.join ? { name: field.join, ...catalog.joins[field.join] } : undefined;
  return { kind: 'local', path, field, sql: field.sql, select: field.select ?? field.sql, type: field.type, ...(join ? { join } : {}) };
}

/** What a query is told when it names a path the catalog does not have. */
export function unknownPathMessage(catalog: QueryCatalog, path: string): string {
  const known = [...catalog.fields.keys()];
  const shown = known.slice(0, 40).join(', ') + (known.length > 40 ? ', …' : '');
  return `'${path}' is not a field of ${catalog.object}; fields are: ${shown}`;
}

/** A value as the API shows it: date-times as RFC 3339, numbers (numeric arrives as text) as numbers. */
export function shownValue(field: Pick<QueryField, 'type'>, value: unknown): unknown {
  return value instanceof Date ? value.toISOString() : field.type === 'number' && typeof value === 'string' ? Number(value) : value;
}

/** A WHERE condition within the catalog's scope. */
export function scoped(catalog: QueryCatalog, condition: string): string {
  return catalog.scope ? `(${catalog.scope}) AND (${condition})` : `(${condition})`;
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
