import type { CrmClient, Filter, QueryObject, Schemas } from './index';
import { answerError } from './answer-error';

/** A date-time dimension's bucket (`week` is ISO, from Monday). */
export type AggregateInterval = 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

/** A dimension of `group_by`: a path, a date-time path in buckets of an interval in an IANA time zone, or a number path in ranges. */
export type Dimension<Path extends string = string> =
  Path | { field: Path; interval: AggregateInterval; time_zone?: string } | { field: Path; ranges: number[] };

/** A metric: `count` (records; with `field`, its non-null values), or an op over a field. */
export type Metric<Path extends string = string> =
  { op: 'count'; field?: Path } | { op: 'count_distinct' | 'sum' | 'avg' | 'min' | 'max'; field: Path } | { op: 'percentile'; field: Path; percentile: number };

/** The body of `POST /<object>/aggregate` (docs/aggregate.md); name the paths and metrics to have the compiler check them. */
export interface Aggregate<
  Path extends string = string,
  M extends Record<string, Metric<Path>> = Record<string, Metric<Path>>,
  D extends Dimension<Path> = Dimension<Path>,
> {
  filter?: Filter<Path>;
  /** 0 to 3 dimensions. */
  group_by?: D[];
  /** 1 to 20, by name. */
  metrics: M;
  sort?: Array<{ metric: keyof M & string; direction?: 'asc' | 'desc' } | { group: Path; direction?: 'asc' | 'desc' }>;
  /** 1 to 1,000 groups; 100 by default. */
  limit?: number;
  cursor?: string | null;
}

/** The path a dimension is keyed by in `group`. */
export type DimensionPath<D> = D extends string ? D : D extends { field: infer F extends string } ? F : never;

/** A group's value on a dimension: a range group is `{from, to}`, a date-time bucket its first instant. */
export type GroupValue = string | number | boolean | null | { from: number | null; to: number | null };

/** The answer of `POST /<object>/aggregate`, its `metrics` keyed by the request's metric names. */
export interface AggregateAnswer<Name extends string = string, GroupPath extends string = string> {
  data: Array<{ group: Record<GroupPath, GroupValue>; metrics: Record<Name, number | string | null> }>;
  totals: Record<Name, number | string | null>;
  has_more: boolean;
  next_cursor: string | null;
}

/** One page of groups of an object's records (`{custom: 'projects'}` for a custom object); an answer other than 200 throws with the API's error. */
export async function aggregate<Path extends string, M extends Record<string, Metric<Path>>, D extends Dimension<Path> = never>(
  client: CrmClient,
  object: QueryObject | { custom: string },
  request: Aggregate<Path, M, D>,
): Promise<AggregateAnswer<keyof M & string, DimensionPath<D>>> {
  const body = request as Schemas['AggregateDto'];
  const { data, error, response } =
    typeof object === 'string'
      ? await client.POST(`/${object}/aggregate`, { body })
      : await client.POST('/objects/{slug}/records/aggregate', { params: { path: { slug: object.custom } }, body });
  if (!data) throw answerError('POST aggregate', response, error);
  return data as AggregateAnswer<keyof M & string, DimensionPath<D>>;
}
