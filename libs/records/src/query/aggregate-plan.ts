import { FieldIssue } from '@crm/common';
import { AGGREGATE_INTERVALS, AGGREGATE_OPS, AggregateDto, AggregateInterval, AggregateLimits, AggregateOp, METRIC_NAME, QueryFieldInfo } from '@crm/contracts';
import type { QueryCatalog, QueryFieldType } from './query-catalog';

/**
 * Whether an aggregation may name a custom field anywhere (filter, dimensions, metrics, sort). Building a
 * catalog reads the object's custom-field definitions, one more round trip to the database before the
 * statement; a request that never mentions `custom_fields` cannot reach one, so it is built without them.
 * The test is on the request's text, so it errs only towards reading them (a value that merely contains
 * the word).
 */
export function namesCustomFields(request: Pick<AggregateDto, 'filter' | 'group_by' | 'metrics' | 'sort'>): boolean {
  return JSON.stringify([request.filter ?? null, request.group_by ?? null, request.metrics ?? null, request.sort ?? null]).includes('custom_fields');
}

/**
 * A path an aggregation reads: a field of the object's own rows (or a joined row), or one another service
 * keeps, whose values are read from it by record (see aggregate-run.ts).
 */
export interface AggregatePath {
  path: string;
  /** Where the request names it (`group_by.0`, `metrics.total.field`). */
  at: string;
  type: QueryFieldType;
  /** The value as SQL over the row alias, for a local path; set later for a remote one. */
  sql?: string;
  join?: string;
  integer?: boolean;
  /** The remote relation the path goes through (`contact` of `contact.stage`). */
  relation?: string;
}

export type DimensionKind = { kind: 'value' } | { kind: 'interval'; interval: AggregateInterval; timeZone: string } | { kind: 'ranges'; bounds: number[] };

export type AggregateDimensionPlan = AggregatePath & DimensionKind & { at: string };

export interface AggregateMetricPlan {
  name: string;
  op: AggregateOp;
  at: string;
  field?: AggregatePath;
  percentile?: number;
  /** Money: the path of the currency each value is in; a group holding more than one is a 400. */
  currency?: AggregatePath;
}

export interface AggregatePlan {
  dimensions: AggregateDimensionPlan[];
  metrics: AggregateMetricPlan[];
  /** Sort keys: a metric's index or a dimension's index, each with its direction. */
  sort: Array<{ metric?: number; dimension?: number; desc: boolean }>;
  limit: number;
}

/**
 * Which paths hold money, and the path of the currency each is in, by object: a deal's value (also as
 * `deal.value` from activities and tasks), a product's price, a line's amount and unit price and the paths
 * its deal and product are joined by.
 */
const MONEY: Record<string, Record<string, string>> = {
  deals: { value: 'currency' },
  products: { price: 'currency' },
  line_items: { amount: 'currency', unit_price: 'currency', 'deal.value': 'deal.currency', 'product.price': 'product.currency' },
};

/** The ops each field type takes; `count` and `count_distinct` take every type but JSON. */
const OPS_FOR: Record<AggregateOp, readonly QueryFieldType[]> = {
  count: ['string', 'enum', 'number', 'boolean', 'datetime'],
  count_distinct: ['string', 'enum', 'number', 'boolean', 'datetime'],
  sum: ['number'],
  avg: ['number'],
  percentile: ['number'],
  min: ['number', 'datetime'],
  max: ['number', 'datetime'],
};

/** The ops another service's paths cannot answer: they need every value in one place, not one per related record. */
const NOT_ACROSS = new Set<AggregateOp>(['count_distinct', 'percentile']);

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether PostgreSQL and the runtime both know the zone; PostgreSQL's answer is checked again when it runs. */
function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks an aggregation's dimensions, metrics, sort and limit against the catalog, collecting every
 * problem with the path where it is (`group_by.1.interval`, `metrics.p90.field`), as the query does.
 * `remoteFields` gives the paths of a remote relation, asked of the service that keeps it.
 */
export async function planAggregate(
  catalog: QueryCatalog,
  request: AggregateDto,
  remoteFields: (relation: string) => Promise<QueryFieldInfo[]>,
  issues: FieldIssue[],
): Promise<AggregatePlan> {
  const issue = (field: string, code: string, message: string) => issues.push({ field, code, message });

  const resolve = async (path: unknown, at: string): Promise<AggregatePath | undefined> => {
    if (typeof path !== 'string' || !path || path.length > 128) {
      issue(at, 'invalid_value', `${at} must be a field path`);
      return undefined;
    }
    const relation = Object.keys(catalog.remotes ?? {}).find((name) => path.startsWith(`${name}.`));
    if (relation) {
      const info = (await remoteFields(relation)).find((f) => f.path === path);
      if (!info) {
        issue(at, 'unknown_field', `'${path}' is not a field of the ${relation} of ${catalog.object}`);
        return undefined;
      }
      return { path, at, type: info.type, relation };
    }
    const field = catalog.fields.get(path);
    if (!field) {
      const known = [...catalog.fields.keys()];
      issue(
        at,
        'unknown_field',
        `'${path}' is not a field of ${catalog.object}; fields are: ${known.slice(0, 40).join(', ')}${known.length > 40 ? ', …' : ''}`,
      );
      return undefined;
    }
    return { path, at, type: field.type, sql: field.sql, ...(field.join ? { join: field.join } : {}), ...(field.integer ? { integer: true } : {}) };
  };

  const dimensions: AggregateDimensionPlan[] = [];
  const seen = new Set<string>();
  for (const [i, raw] of (request.group_by ?? []).entries()) {
    const at = `group_by.${i}`;
    const spec: unknown = typeof raw === 'string' ? { field: raw } : raw;
    if (!isPlainObject(spec)) {
      issue(at, 'invalid_value', `${at} must be a path, {field, interval, time_zone} or {field, ranges}`);
      continue;
    }
    const extra = Object.keys(spec).filter((key) => !['field', 'interval', 'time_zone', 'ranges'].includes(key));
    if (extra.length) issue(at, 'invalid_value', `${at} has unknown members: ${extra.join(', ')}`);
    const path = await resolve(spec.field, typeof raw === 'string' ? at : `${at}.field`);
    if (typeof spec.field === 'string') {
      if (seen.has(spec.field)) issue(at, 'duplicate_dimension', `'${spec.field}' is grouped by twice: a path may name one dimension`);
      seen.add(spec.field);
    }
    let kind: DimensionKind = { kind: 'value' };
    if (spec.interval !== undefined && spec.ranges !== undefined) issue(at, 'invalid_value', `${at} takes interval or ranges, not both`);
    else if (spec.interval !== undefined) {
      const zone = spec.time_zone ?? 'UTC';
      if (!(AGGREGATE_INTERVALS as readonly unknown[]).includes(spec.interval))
        issue(`${at}.interval`, 'invalid_value', `interval must be one of ${AGGREGATE_INTERVALS.join(', ')}`);
      else if (path && path.type !== 'datetime')
        issue(`${at}.interval`, 'invalid_interval', `'${path.path}' is a ${path.type}: an interval applies to a date-time field`);
      if (typeof zone !== 'string' || !isTimeZone(zone))
        issue(`${at}.time_zone`, 'invalid_value', `time_zone must be an IANA time zone name, such as Europe/Berlin`);
      kind = { kind: 'interval', interval: spec.interval as AggregateInterval, timeZone: String(zone) };
    } else if (spec.ranges !== undefined) {
      const bounds = spec.ranges;
      if (
        !Array.isArray(bounds) ||
        bounds.length < 1 ||
        bounds.length > AggregateLimits.ranges ||
        !bounds.every((b, k) => typeof b === 'number' && Number.isFinite(b) && (k === 0 || b > bounds[k - 1]))
      )
        issue(`${at}.ranges`, 'invalid_value', `ranges must be 1 to ${AggregateLimits.ranges} numbers in ascending order, each greater than the one before`);
      else if (path && path.type !== 'number') issue(`${at}.ranges`, 'invalid_ranges', `'${path.path}' is a ${path.type}: ranges apply to a number field`);
      kind = { kind: 'ranges', bounds: bounds as number[] };
    } else if (spec.time_zone !== undefined) issue(`${at}.time_zone`, 'invalid_value', `time_zone goes with an interval`);
    if (path?.type === 'json') issue(at, 'invalid_value', `'${path.path}' is a JSON object and cannot be grouped by; group by one of its values`);
    if (path) dimensions.push({ ...path, ...kind, at });
  }

  const metrics: AggregateMetricPlan[] = [];
  const entries = isPlainObject(request.metrics) ? Object.entries(request.metrics) : [];
  if (entries.length < 1 || entries.length > AggregateLimits.metrics)
    issue('metrics', 'invalid_value', `metrics must name 1 to ${AggregateLimits.metrics} metrics`);
  for (const [name, spec] of entries) {
    const at = `metrics.${name}`;
    if (!METRIC_NAME.test(name)) issue(at, 'invalid_value', `a metric's name must match ${METRIC_NAME.source}`);
    if (!isPlainObject(spec) || !(AGGREGATE_OPS as readonly unknown[]).includes(spec.op)) {
      issue(`${at}.op`, 'invalid_value', `op must be one of ${AGGREGATE_OPS.join(', ')}`);
      continue;
    }
    const op = spec.op as AggregateOp;
    const extra = Object.keys(spec).filter((key) => !['op', 'field', 'percentile'].includes(key));
    if (extra.length) issue(at, 'invalid_value', `${at} has unknown members: ${extra.join(', ')}`);
    if (op === 'percentile') {
      if (typeof spec.percentile !== 'number' || !(spec.percentile >= 0 && spec.percentile <= 100))
        issue(`${at}.percentile`, 'invalid_value', 'percentile must be a number from 0 to 100');
    } else if (spec.percentile !== undefined) issue(`${at}.percentile`, 'invalid_value', 'percentile goes with op percentile');
    if (spec.field === undefined && op !== 'count') {
      issue(`${at}.field`, 'invalid_value', `${op} needs a field`);
      continue;
    }
    const field = spec.field === undefined ? undefined : await resolve(spec.field, `${at}.field`);
    const metric: AggregateMetricPlan = { name, op, at, ...(field ? { field } : {}), ...(op === 'percentile' ? { percentile: Number(spec.percentile) } : {}) };
    if (field && !OPS_FOR[op].includes(field.type)) issue(`${at}.op`, 'invalid_op', `${op} does not apply to '${field.path}', a ${field.type} field`);
    else if (field?.relation && NOT_ACROSS.has(op))
      issue(
        `${at}.op`,
        'not_across_services',
        `'${field.path}' is kept by another service, which answers its values one related record at a time: ${op} is not answered over it (count, sum, avg, min and max are); filter on it, or ask the ${field.relation}'s own object`,
      );
    if (field && op !== 'count' && op !== 'count_distinct') {
      const relatedObject = field.relation ? catalog.remotes![field.relation].object : catalog.object;
      const own = field.relation ? field.path.slice(field.relation.length + 1) : field.path;
      const currencyPath = MONEY[relatedObject]?.[own];
      if (currencyPath) {
        const currency = await resolve(field.relation ? `${field.relation}.${currencyPath}` : currencyPath, `${at}.field`);
        if (currency) metric.currency = currency;
      }
    }
    metrics.push(metric);
  }

  const sort = ((request.sort ?? []) as unknown[]).map((key, i) => {
    const at = `sort.${i}`;
    const desc = isPlainObject(key) && key.direction === 'desc';
    if (isPlainObject(key) && key.direction !== undefined && key.direction !== 'asc' && key.direction !== 'desc')
      issue(`${at}.direction`, 'invalid_value', 'direction must be asc or desc');
    if (isPlainObject(key) && typeof key.metric === 'string' && key.group === undefined) {
      const metric = metrics.findIndex((m) => m.name === key.metric);
      if (metric < 0) issue(`${at}.metric`, 'invalid_value', `'${key.metric}' is not one of this request's metrics`);
      return { metric, desc };
    }
    if (isPlainObject(key) && typeof key.group === 'string' && key.metric === undefined) {
      const dimension = dimensions.findIndex((d) => d.path === key.group);
      if (dimension < 0) issue(`${at}.group`, 'invalid_value', `'${key.group}' is not one of this request's group_by paths`);
      return { dimension, desc };
    }
    issue(at, 'invalid_value', `${at} must be {metric, direction?} or {group, direction?}`);
    return { desc };
  });

  return { dimensions, metrics, sort, limit: request.limit ?? AggregateLimits.defaultGroups };
}
