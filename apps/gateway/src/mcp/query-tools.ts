import { AnyOperation, MAX_PAGE_SIZE, Ops, QueryFieldInfo, QueryLimits, RecordQueryDto } from '@crm/contracts';
import { JsonSchema } from './input-schemas';

/** A query tool's object: the operation it calls, and who describes its paths. */
export interface QueryObject {
  object: string;
  /** A custom object's records, queried at /objects/:slug/records/query. */
  custom: boolean;
  op: AnyOperation;
  fields: typeof Ops.contactsInternal.queryFields | typeof Ops.dealsInternal.queryFields;
}

/** Who describes the paths of the objects each service keeps. */
const DESCRIBED_BY = { contacts: Ops.contactsInternal.queryFields, deals: Ops.dealsInternal.queryFields } as const;

/** Every `POST /<object>/query` of the operation table, read from it: the request name says which service answers. */
const BUILT_IN: readonly QueryObject[] = Object.values(Ops)
  .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
  .flatMap((op) => {
    const object = /^\/(\w+)\/query$/.exec(op.http?.path ?? '')?.[1];
    const service = op.name.split('.')[0] as keyof typeof DESCRIBED_BY;
    return object && DESCRIBED_BY[service] ? [{ object, custom: false, op, fields: DESCRIBED_BY[service] }] : [];
  });

export const QUERY_TOOL_PREFIX = 'query_';

/** A custom object's records, which the contacts service keeps and describes. */
const customObject = (object: string): QueryObject => ({ object, custom: true, op: Ops.objects.queryRecords, fields: Ops.contactsInternal.queryFields });

/** The objects a key with read access may query: the built-in ones and each live custom object. */
export function queryObjects(customObjects: readonly string[]): QueryObject[] {
  return [...BUILT_IN, ...customObjects.map(customObject)];
}

/** The object a tool name queries, if it is a query tool; any other name after the prefix is a custom object's slug, which the service checks. */
export function queryObjectOf(tool: string): QueryObject | undefined {
  if (!tool.startsWith(QUERY_TOOL_PREFIX)) return undefined;
  const object = tool.slice(QUERY_TOOL_PREFIX.length);
  return BUILT_IN.find((candidate) => candidate.object === object) ?? customObject(object);
}

/**
 * An enum's values are written by whoever may change the schema, and every agent reads them in the tool
 * list: they appear only as JSON strings, each at most ENUM_VALUE_CHARS long and at most ENUM_VALUES_LISTED
 * of them in a description, never as prose. Paths, slugs and operators are SLUG_SHAPE or ours.
 */
const ENUM_VALUE_CHARS = 40;
const ENUM_VALUES_LISTED = 20;

const isShort = (value: string) => value.length <= ENUM_VALUE_CHARS;

/** The values as a JSON list, cut to its bounds, saying what was cut. */
function quotedValues(values: readonly string[]): string {
  const listed = values.slice(0, ENUM_VALUES_LISTED);
  const which = values.length > listed.length ? `${values.length} values, the first ${listed.length} as JSON` : 'values as JSON';
  const cut = listed.every(isShort) ? '' : `, longer ones cut to ${ENUM_VALUE_CHARS} characters`;
  return `${which}${cut}: ${JSON.stringify(listed.map((value) => (isShort(value) ? value : `${value.slice(0, ENUM_VALUE_CHARS - 1)}…`)))}`;
}

const VALUE: Record<QueryFieldInfo['type'], (field: QueryFieldInfo) => JsonSchema> = {
  string: () => ({ type: 'string' }),
  // A value too long to show whole leaves the list open: the service still checks it, describe_schema has them all.
  enum: ({ values = [] }) => (values.every(isShort) ? { type: 'string', enum: [...values] } : { type: 'string' }),
  number: () => ({ type: 'number' }),
  boolean: () => ({ type: 'boolean' }),
  datetime: () => ({ type: 'string', format: 'date-time' }),
  json: () => ({}),
};

/** What one path accepts: a literal (`$eq`), or an object of the operators its type allows. */
function conditionSchema(field: QueryFieldInfo): JsonSchema {
  const value = VALUE[field.type](field);
  const literal = { anyOf: [value, { type: 'null' }] };
  const operand = (op: string): JsonSchema => {
    if (op === '$in' || op === '$nin') return { type: 'array', maxItems: QueryLimits.inValues, items: literal };
    if (op === '$exists') return { type: 'boolean' };
    if (op === '$eq' || op === '$ne') return literal;
    return field.type === 'enum' && !['$gt', '$gte', '$lt', '$lte'].includes(op) ? { type: 'string' } : value;
  };
  return {
    description: `${field.type}${field.values ? `; ${quotedValues(field.values)}` : ''}; operators: ${field.operators.join(' ')}`,
    anyOf: [literal, { type: 'object', minProperties: 1, additionalProperties: false, properties: Object.fromEntries(field.operators.map((op) => [op, operand(op)])) }],
  };
}

/**
 * The input schema of one object's query tool: the filter as a recursive schema whose keys are exactly
 * the object's paths (custom fields and relation paths included) with the operators each allows, `sort`
 * over the sortable paths and `fields` over every path; the same body POST /<object>/query takes.
 */
export function queryInputSchema(fields: readonly QueryFieldInfo[]): JsonSchema {
  const filterable = fields.filter((field) => field.operators.length);
  const expression = { $ref: '#/$defs/filter' };
  return {
    type: 'object',
    properties: {
      filter: expression,
      sort: {
        type: 'array',
        maxItems: QueryLimits.sortKeys,
        items: {
          type: 'object',
          properties: { field: { type: 'string', enum: fields.filter((f) => f.sortable).map((f) => f.path) }, direction: { type: 'string', enum: ['asc', 'desc'] } },
          required: ['field'],
          additionalProperties: false,
        },
      },
      fields: { type: 'array', maxItems: QueryLimits.fields, items: { type: 'string', enum: fields.map((f) => f.path) } },
      limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
      cursor: { type: 'string', description: 'next_cursor of the previous page, with the same filter, sort and fields.' },
    },
    additionalProperties: false,
    $defs: {
      filter: {
        type: 'object',
        description: 'Keys are ANDed. $and/$or take non-empty arrays of filters, $not one filter. Nulls as in MongoDB: $ne and $nin match missing values, comparisons never do.',
        properties: {
          ...Object.fromEntries(filterable.map((field) => [field.path, conditionSchema(field)])),
          $and: { type: 'array', minItems: 1, items: expression },
          $or: { type: 'array', minItems: 1, items: expression },
          $not: expression,
        },
        additionalProperties: false,
      },
    },
  };
}

export function queryToolDescription(object: QueryObject): string {
  const what = object.custom ? `records of the custom object '${object.object}'` : object.object;
  return `Finds ${what} matching any boolean filter over their fields, custom fields and related records one hop away, sorted on any field, returning only the fields asked for; page with next_cursor. Reads what was just written.`;
}

/** A tool call's arguments as the query body; the service validates it with the HTTP route's rules. */
export function queryRequest(object: QueryObject, args: Record<string, unknown>): { params: Record<string, string>; body: RecordQueryDto } {
  return { params: object.custom ? { slug: object.object } : {}, body: args as RecordQueryDto };
}
