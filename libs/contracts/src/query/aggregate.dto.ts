import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsDefined, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** Limits of one aggregation, so that no client can ask for unbounded work in one request (docs/aggregate.md). */
export const AggregateLimits = {
  dimensions: 3,
  metrics: 20,
  sortKeys: 10,
  /** Bounds of one `ranges` dimension. */
  ranges: 100,
  defaultGroups: 100,
  groups: 1000,
  cursor: 256 * 1024,
} as const;

export const AGGREGATE_OPS = ['count', 'count_distinct', 'sum', 'avg', 'min', 'max', 'percentile'] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];
export const AGGREGATE_INTERVALS = ['hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type AggregateInterval = (typeof AGGREGATE_INTERVALS)[number];
export const METRIC_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** A dimension: a path, a date-time path in buckets of an interval in a time zone, or a number path in ranges. */
export type AggregateDimension = string | { field: string; interval: AggregateInterval; time_zone?: string } | { field: string; ranges: number[] };

export interface AggregateMetric {
  op: AggregateOp;
  field?: string;
  /** 0 to 100, for `percentile`. */
  percentile?: number;
}

export type AggregateSortKey = { metric: string; direction?: 'asc' | 'desc' } | { group: string; direction?: 'asc' | 'desc' };

/**
 * `POST /<object>/aggregate`: the query's filter, up to three dimensions, up to twenty named metrics, and
 * paging of the groups. The shapes inside group_by, metrics and sort are checked by the service that owns
 * the object, which knows its fields, so that every problem is named in one answer.
 */
export class AggregateDto {
  @IsOptional()
  @IsObject({ message: 'filter must be an object' })
  filter?: Record<string, unknown>;

  @IsOptional()
  @IsArray({ message: 'group_by must be an array' })
  @ArrayMaxSize(AggregateLimits.dimensions, { message: `group_by may have at most ${AggregateLimits.dimensions} dimensions` })
  group_by?: AggregateDimension[];

  @IsDefined({ message: 'metrics is required' })
  @IsObject({ message: 'metrics must be an object of named metrics' })
  metrics!: Record<string, AggregateMetric>;

  @IsOptional()
  @IsArray({ message: 'sort must be an array' })
  @ArrayMaxSize(AggregateLimits.sortKeys, { message: `sort may have at most ${AggregateLimits.sortKeys} keys` })
  sort?: AggregateSortKey[];

  @IsOptional()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: `limit must be between 1 and ${AggregateLimits.groups}` })
  @Max(AggregateLimits.groups, { message: `limit must be between 1 and ${AggregateLimits.groups}` })
  limit?: number;

  /** Carries the last group's values, which may be long text (an activity's body): bounded by the body limit, not the query's 4 KiB. */
  @IsOptional()
  @IsString({ message: 'cursor must be a string' })
  @MaxLength(AggregateLimits.cursor, { message: 'cursor is not valid for this aggregation' })
  cursor?: string | null;
}

export type AggregateValue = number | string | boolean | null | { from: number | null; to: number | null };

/** One group: its value on each dimension, keyed by the dimension's path, and its metrics by name. */
export class AggregateGroupView {
  @ApiProperty({ type: 'object', additionalProperties: true, example: { 'stage.name': 'Proposal', expected_close: '2026-12-01T00:00:00.000+01:00' } })
  group!: Record<string, AggregateValue>;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { deals: 12, pipeline: 1200000, p90: 250000 } })
  metrics!: Record<string, number | string | null>;
}

/** The answer of an aggregation: a page of groups, and the metrics over every matched record. */
export interface AggregateReply {
  data: AggregateGroupView[];
  totals: Record<string, number | string | null>;
  has_more: boolean;
  next_cursor: string | null;
}

const direction = { type: 'string', enum: ['asc', 'desc'] };

/**
 * JSON Schemas of an aggregation's members, for documents and agents (class-validator rules cannot say
 * "a path or one of two objects"). References point at `#/components/schemas/<name>`.
 */
export const AGGREGATE_SCHEMAS: Record<string, Record<string, unknown>> = {
  AggregateDimension: {
    description:
      'A path the filter may use; `{field, interval, time_zone?}` for a date-time in buckets (week: ISO, from Monday; time_zone: IANA, default UTC); `{field, ranges}` for a number in half-open buckets [a, b), with one below the first bound and one from the last.',
    anyOf: [
      { type: 'string', maxLength: 128 },
      {
        type: 'object',
        required: ['field', 'interval'],
        properties: { field: { type: 'string' }, interval: { type: 'string', enum: [...AGGREGATE_INTERVALS] }, time_zone: { type: 'string' } },
        additionalProperties: false,
      },
      {
        type: 'object',
        required: ['field', 'ranges'],
        properties: { field: { type: 'string' }, ranges: { type: 'array', minItems: 1, maxItems: AggregateLimits.ranges, items: { type: 'number' } } },
        additionalProperties: false,
      },
    ],
  },
  AggregateMetric: {
    type: 'object',
    required: ['op'],
    properties: {
      op: { type: 'string', enum: [...AGGREGATE_OPS] },
      field: { type: 'string', description: 'Required but for count (records; with field, its non-null values).' },
      percentile: { type: 'number', minimum: 0, maximum: 100, description: 'For percentile, interpolated as PostgreSQL percentile_cont.' },
    },
    additionalProperties: false,
  },
  AggregateSortKey: {
    anyOf: [
      { type: 'object', required: ['metric'], properties: { metric: { type: 'string' }, direction }, additionalProperties: false },
      { type: 'object', required: ['group'], properties: { group: { type: 'string' }, direction }, additionalProperties: false },
    ],
  },
};

/** The members of AggregateDto whose shapes AGGREGATE_SCHEMAS gives. */
export const AGGREGATE_PROPERTIES: Record<string, Record<string, unknown>> = {
  group_by: { type: 'array', maxItems: AggregateLimits.dimensions, items: { $ref: '#/components/schemas/AggregateDimension' } },
  metrics: {
    type: 'object',
    minProperties: 1,
    maxProperties: AggregateLimits.metrics,
    propertyNames: { pattern: METRIC_NAME.source },
    additionalProperties: { $ref: '#/components/schemas/AggregateMetric' },
  },
  sort: { type: 'array', maxItems: AggregateLimits.sortKeys, items: { $ref: '#/components/schemas/AggregateSortKey' } },
};

/** An example request, for the documents. */
export const AGGREGATE_EXAMPLE = {
  filter: { 'stage.type': 'open' },
  group_by: ['stage.name', { field: 'expected_close', interval: 'month', time_zone: 'Europe/Berlin' }],
  metrics: { deals: { op: 'count' }, pipeline: { op: 'sum', field: 'value' }, p90: { op: 'percentile', field: 'value', percentile: 90 } },
  sort: [{ metric: 'pipeline', direction: 'desc' }],
  limit: 100,
};
