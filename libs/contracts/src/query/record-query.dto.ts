import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { MAX_PAGE_SIZE } from '../paging';

/** Limits of one query, so that no client can ask for unbounded work in one request (docs/query.md). */
export const QueryLimits = {
  depth: 8,
  conditions: 50,
  sortKeys: 5,
  fields: 50,
  inValues: 500,
  /** Longest field path, e.g. `custom_fields.<name>` or `company.domain`. */
  path: 128,
  /**
   * Most records of another service one condition on a relation path may match (`contact.email` on
   * deals): the owning service answers with their ids, and past this (QUERY_RELATED_IDS_MAX of the owning service, by default) the query is a 400 that says how to narrow it.
   */
  relatedIds: 10_000,
} as const;

export const QUERY_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$starts_with', '$ends_with', '$exists'] as const;
export type QueryOperator = (typeof QUERY_OPERATORS)[number];

export class QuerySortKey {
  @IsDefined({ message: 'field is required' })
  @IsString({ message: 'field must be a string' })
  @MaxLength(QueryLimits.path, { message: `field must be at most ${QueryLimits.path} characters` })
  field!: string;

  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'direction must be asc or desc' })
  direction?: 'asc' | 'desc';
}

/**
 * `POST /<object>/query`: a boolean filter over any field, custom fields and one-hop relation paths
 * included, a sort on any scalar path, the fields to return, and keyset paging. The filter's own rules
 * (operators, types, limits) are checked by the service that owns the object, which knows its fields.
 */
export class RecordQueryDto {
  /** `{path: literal}`, `{path: {$op: value}}`, `$and`, `$or`, `$not`, with MongoDB's null semantics. */
  @IsOptional()
  @IsObject({ message: 'filter must be an object' })
  filter?: Record<string, unknown>;

  @IsOptional()
  @IsArray({ message: 'sort must be an array' })
  @ArrayMaxSize(QueryLimits.sortKeys, { message: `sort may have at most ${QueryLimits.sortKeys} keys` })
  @ValidateNested({ each: true })
  @Type(() => QuerySortKey)
  sort?: QuerySortKey[];

  @IsOptional()
  @IsArray({ message: 'fields must be an array' })
  @ArrayMaxSize(QueryLimits.fields, { message: `fields may list at most ${QueryLimits.fields} paths` })
  @IsString({ each: true, message: 'fields must be field paths' })
  @MaxLength(QueryLimits.path, { each: true, message: `each field path is at most ${QueryLimits.path} characters` })
  fields?: string[];

  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `limit must be between 1 and ${MAX_PAGE_SIZE}` })
  limit?: number;

  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(4096, { message: 'cursor is not valid for this query' })
  cursor?: string;
}

const literal = { type: ['string', 'number', 'boolean', 'null'] };

/**
 * JSON Schemas of the filter expression, for documents and agents: recursive through `$and`, `$or` and
 * `$not`; any other key is a field path whose value is a literal (`$eq`) or an object of operators.
 * References point at `#/components/schemas/<name>`.
 */
export const QUERY_EXPRESSION_SCHEMAS: Record<string, Record<string, unknown>> = {
  QueryExpression: {
    type: 'object',
    description:
      "A filter: `$and`/`$or` take non-empty arrays of expressions, `$not` one expression; any other key is a field path whose value is a literal (shorthand for `$eq`) or an object of operators that must all hold. Several keys are ANDed. Null semantics are MongoDB's: `$ne` and `$nin` match nulls, comparisons never do.",
    properties: {
      $and: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/QueryExpression' } },
      $or: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/QueryExpression' } },
      $not: { $ref: '#/components/schemas/QueryExpression' },
    },
    additionalProperties: { anyOf: [literal, { $ref: '#/components/schemas/QueryOperators' }] },
  },
  QueryOperators: {
    type: 'object',
    minProperties: 1,
    properties: {
      $eq: literal,
      $ne: literal,
      $gt: { type: ['string', 'number'] },
      $gte: { type: ['string', 'number'] },
      $lt: { type: ['string', 'number'] },
      $lte: { type: ['string', 'number'] },
      $in: { type: 'array', maxItems: QueryLimits.inValues, items: literal },
      $nin: { type: 'array', maxItems: QueryLimits.inValues, items: literal },
      $contains: { type: 'string', description: 'Case-insensitive; `%`, `_` and `\\` are literal characters.' },
      $starts_with: { type: 'string' },
      $ends_with: { type: 'string' },
      $exists: { type: 'boolean', description: 'true: the field is not null.' },
    },
    additionalProperties: false,
  },
};

/**
 * One condition on a relation path whose records another service keeps, e.g. `{"contact.email": {...},
 * "contact.stage": "customer"}` on deals: the owning service answers with the ids of the records that
 * match it, or with those that do not (`negate`) when it also matches a record with no relation, so that
 * the asking service can test its own reference column exactly.
 */
export interface RemoteLookup {
  /** Where the condition is in the client's filter (`filter.$and.1`), for errors. */
  at: string;
  /** Field paths as the client wrote them (`contact.email`) and their operators. */
  filter: Record<string, unknown>;
  negate: boolean;
}

/** Body of `<service>.internal.query_match`: the owning service evaluates conditions on its records. */
export interface RemoteMatchRequest {
  /** The queried object of the owning service (`contacts`, `companies`, `users`, `deals`). */
  object: string;
  /** The relation's name in the asking object (`contact`), which prefixes every path. */
  prefix: string;
  lookups: RemoteLookup[];
  /** Test only these records: those the asking query's rows can reference, when few enough to send. */
  within?: string[];
}

/** The ids each lookup matched (or, negated, did not match), at most QUERY_RELATED_IDS_MAX (QueryLimits.relatedIds) each. */
export interface RemoteMatchReply {
  ids: string[][];
}

/** Body of `<service>.internal.query_values`: the paths of a page's related records, by id. */
export interface RemoteValuesRequest {
  object: string;
  prefix: string;
  ids: string[];
  /** Paths as the client wrote them (`contact.email`) and where (`fields.2`). */
  fields: Array<{ at: string; path: string }>;
}

export interface RemoteValuesReply {
  /** Each existing record's values by path, among the first `delivered` ids; a missing one does not exist. */
  records: Record<string, Record<string, unknown>>;
  /** How many of the ids asked, in order, are answered: fewer than all when more would not fit in one reply. */
  delivered: number;
}

/** One path a query over an object may name, with what it allows: what agents build queries from. */
export interface QueryFieldInfo {
  path: string;
  type: 'string' | 'enum' | 'number' | 'boolean' | 'datetime' | 'json';
  /** The operators its filter conditions may use; none for a JSON value, which can only be returned. */
  operators: QueryOperator[];
  /** An enum's values. */
  values?: readonly string[];
  /** Whether `sort` may name it. */
  sortable: boolean;
}

/** Body of `<service>.internal.query_fields`: an object's paths, named through `prefix` when another service asks. */
export interface QueryFieldsRequest {
  object: string;
  prefix?: string;
}

export interface QueryFieldsReply {
  fields: QueryFieldInfo[];
}
