import {
  CursorCodec,
  cursorValueFits,
  CursorValueType,
  DomainError,
  ErrorCode,
  FieldIssue,
  fitPage,
  invalidCursor,
  keysetAfter,
  validationFailed,
} from '@crm/common';
import { AggregateDto, AggregateReply, AggregateValue, QueryFieldInfo, QueryLimits } from '@crm/contracts';
import { createHash } from 'crypto';
import { DataSource } from 'typeorm';
import { compileFilter } from './filter-compiler';
import { QueryBudget, QueryRunOptions } from './query-budget';
import { QueryCatalog, QueryFieldType } from './query-catalog';
import { RemoteQueries } from './remote-matching';
import { AggregateDimensionPlan, AggregateMetricPlan, AggregatePath, AggregatePlan, planAggregate } from './aggregate-plan';

/**
 * Hash aggregates of many groups, and the sorts that percentile and count_distinct need, stay in memory
 * at a million rows rather than spill to disk at the default 4 MB; for the aggregation's transaction only.
 * Past work_mem they spill to temporary files, bounded by temp_file_limit (AGGREGATE_TEMP_FILE_LIMIT).
 */
export const AGGREGATE_SETTINGS = { work_mem: '64MB', temp_file_limit: '1GB' };

/** What a grouping past its memory (SQLSTATE 53400, temp_file_limit) is told to change. */
const MEMORY_HINT = 'Group by fewer paths or paths with fewer distinct values, or narrow the filter, so that fewer groups are kept.';

const CAST: Record<QueryFieldType, string> = { string: 'text', enum: 'text', number: 'numeric', boolean: 'boolean', datetime: 'timestamptz', json: 'jsonb' };

/** Parameters of one statement, numbered after those the filter compiled to. */
class Params {
  constructor(readonly values: unknown[]) {}
  bind(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

interface Compiled {
  where: string;
  params: unknown[];
  joins: string[];
  lookups: ReturnType<typeof compileFilter>['lookups'];
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const scoped = (catalog: QueryCatalog, condition: string) => (catalog.scope ? `(${catalog.scope}) AND (${condition})` : `(${condition})`);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function remoteOf(options: QueryRunOptions): RemoteQueries {
  if (!options.remote) throw new Error('this catalog has remote relations: pass QueryRunOptions.remote');
  return options.remote;
}

/**
 * Runs `POST /<object>/aggregate` (docs/aggregate.md) over a query catalog: the filter is the query's own,
 * compiled by the query engine; the groups are computed in one statement, with the totals as a grouping
 * set of their own, and paged with a keyset cursor over the sort keys and every dimension. Paths another
 * service keeps are read from it for the referenced records and joined as a list of values.
 */
export async function runAggregate(
  dataSource: DataSource,
  catalog: QueryCatalog,
  request: AggregateDto,
  options: QueryRunOptions,
  cursors: CursorCodec,
): Promise<AggregateReply> {
  const budget = new QueryBudget(options.timeoutMs);
  const issues: FieldIssue[] = [];
  let compiled: Compiled = { where: 'TRUE', params: [], joins: [], lookups: [] };
  try {
    compiled = compileFilter(catalog, request.filter ?? {});
  } catch (err) {
    if (!(err instanceof DomainError && err.code === ErrorCode.ValidationFailed)) throw err;
    issues.push(...(err.details ?? []));
  }
  const described = new Map<string, Promise<QueryFieldInfo[]>>();
  const remoteFields = (relation: string) => {
    if (!described.has(relation)) described.set(relation, remoteOf(options).fields(catalog.remotes![relation], relation));
    return described.get(relation)!;
  };
  const plan = await planAggregate(catalog, request, remoteFields, issues);
  if (!issues.length && compiled.lookups.length) issues.push(...(await bindLookups(dataSource, catalog, compiled, request.filter, options, budget)));
  if (issues.length) throw validationFailed(issues);

  const params = new Params(compiled.params);
  const joins = new Set(compiled.joins);
  const paths = [...plan.dimensions, ...plan.metrics.flatMap((m) => [m.field, m.currency].filter((p): p is AggregatePath => !!p))];
  for (const path of paths) if (path.join) joins.add(path.join);
  const remoteJoins = await readRemotePaths(dataSource, catalog, compiled, [...joins], paths, params, options, budget);

  const digest = createHash('sha256')
    .update(JSON.stringify({ o: catalog.object, f: request.filter ?? null, g: request.group_by ?? [], m: request.metrics, s: request.sort ?? [] }))
    .digest('base64url')
    .slice(0, 22);
  const keys = sortKeys(plan);
  const list = `${catalog.object}/aggregate`;
  const cursor = cursors.decode(list, request.cursor ?? undefined, (value): value is { q: string; k: Array<string | null> } => isCursor(value, keys));
  if (cursor && cursor.q !== digest)
    throw invalidCursor('cursor belongs to a different aggregation: send the same filter, group_by, metrics and sort, or start without a cursor');
  const after = cursor ? keysetAfter(keys, cursor.k, "''", (value, key) => (key === 'id' ? "''" : params.bind(value, keys[key].cast)), '') : 'TRUE';

  const sql = statement(catalog, plan, compiled.where, [...joins], remoteJoins, params, keys, after);
  let rows: Array<Record<string, unknown>>;
  try {
    rows = await budget.run(dataSource, (run) => run(sql, params.values), options.memory ?? AGGREGATE_SETTINGS);
  } catch (err) {
    if ((err as { code?: string }).code === '53400') {
      const limit = (options.memory ?? AGGREGATE_SETTINGS).temp_file_limit;
      throw new DomainError(ErrorCode.QueryTooExpensive, `The aggregation needs more than its ${limit} of temporary files. ${MEMORY_HINT}`);
    }
    // Both runtimes were asked before the statement; a zone only the other one knows is still the client's mistake.
    const zone = plan.dimensions.find((d) => d.kind === 'interval');
    if (zone && /time zone/i.test(String((err as Error).message)))
      throw validationFailed([
        { field: `${zone.at}.time_zone`, code: 'invalid_value', message: 'time_zone must be an IANA time zone name, such as Europe/Berlin' },
      ]);
    throw err;
  }
  const part = (n: number) => rows.filter((row) => row['~part'] === n);
  const [mixed] = part(1);
  const totalsRow = part(2)[0];
  const pageRows = plan.dimensions.length ? part(0) : [totalsRow];
  const mixedGroup = plan.dimensions.length ? mixed : totalsRow;
  if (mixedGroup) {
    const found = plan.metrics.flatMap((m, j) => (m.currency && mixedGroup[`~x${j}`] === true ? [{ m, j }] : []));
    if (found.length) {
      const group = JSON.stringify(groupOf(plan.dimensions, mixedGroup));
      throw new DomainError(
        ErrorCode.ValidationFailed,
        `The group ${group} holds more than one currency, and money is never added across currencies: group by currency or filter on it.`,
        found.map(({ m }) => ({
          field: `${m.at}.field`,
          code: 'mixed_currencies',
          message: `the group ${group} holds ${m.field!.path} in more than one currency: group by ${m.currency!.path} or filter on it`,
        })),
      );
    }
  }
  const groups = pageRows.slice(0, plan.limit).map((row) => ({ group: groupOf(plan.dimensions, row), metrics: metricsOf(plan.metrics, row, false) }));
  // The answer travels back as one NATS message: a page of long group values ends early, with a cursor, rather than outgrow it.
  const { items, hasMore } = fitPage(groups, plan.limit, pageRows.length > plan.limit);
  const last = pageRows[items.length - 1];
  return {
    data: items,
    totals: metricsOf(plan.metrics, totalsRow, plan.dimensions.length > 0),
    has_more: hasMore,
    next_cursor: hasMore ? cursors.encode(list, { q: digest, k: keys.map((_, i) => (last[`~k${i}`] ?? null) as string | null) }) : null,
  };
}

interface SortKey {
  sql: string;
  desc: boolean;
  cast: string;
  type: CursorValueType;
}

/** The sort the client asked for, then every dimension not yet named, so that a group's keys are unique and a keyset pages them. */
function sortKeys(plan: AggregatePlan): SortKey[] {
  if (!plan.dimensions.length) return [];
  const keys: SortKey[] = [];
  const named = new Set<number>();
  for (const key of plan.sort) {
    if (key.metric !== undefined) keys.push({ sql: `"~a${key.metric}"`, desc: key.desc, ...metricType(plan.metrics[key.metric]) });
    else if (!named.has(key.dimension!)) {
      named.add(key.dimension!);
      keys.push({ sql: `"~g${key.dimension}"`, desc: key.desc, ...dimensionType(plan.dimensions[key.dimension!]) });
    }
  }
  plan.dimensions.forEach((d, i) => {
    if (!named.has(i)) keys.push({ sql: `"~g${i}"`, desc: false, ...dimensionType(d) });
  });
  return keys;
}

function typeOf(type: QueryFieldType): { cast: string; type: CursorValueType } {
  return type === 'number'
    ? { cast: 'numeric', type: 'numeric' }
    : type === 'boolean'
      ? { cast: 'boolean', type: 'boolean' }
      : type === 'datetime'
        ? { cast: 'timestamptz', type: 'timestamptz' }
        : { cast: 'text', type: 'text' };
}

function dimensionType(d: AggregateDimensionPlan) {
  return d.kind === 'interval' ? typeOf('datetime') : d.kind === 'ranges' ? { cast: 'integer', type: 'bigint' as const } : typeOf(d.type);
}

function metricType(m: AggregateMetricPlan) {
  if (m.op === 'count' || m.op === 'count_distinct') return { cast: 'bigint', type: 'bigint' as const };
  if (m.op === 'percentile') return { cast: 'float8', type: 'numeric' as const };
  return m.op === 'min' || m.op === 'max' ? typeOf(m.field!.type) : typeOf('number');
}

function isCursor(value: unknown, keys: readonly SortKey[]): value is { q: string; k: Array<string | null> } {
  if (!isPlainObject(value) || typeof value.q !== 'string' || !Array.isArray(value.k) || value.k.length !== keys.length) return false;
  return value.k.every((v, i) => v === null || (typeof v === 'string' && cursorValueFits(keys[i].type, v)));
}

function aggregateOf(m: AggregateMetricPlan, j: number, params: Params): string {
  const x = `"~m${j}"`;
  switch (m.op) {
    case 'count':
      return m.field ? `count(${x})` : 'count(*)';
    case 'count_distinct':
      return `count(DISTINCT ${x})`;
    case 'percentile':
      return `percentile_cont(${params.bind(m.percentile! / 100, 'float8')}) WITHIN GROUP (ORDER BY ${x})`;
    default:
      return `${m.op}(${x})`;
  }
}

/** Metrics whose totals are not a function of the groups' values: they need the rows again. */
const WHOLE = new Set(['count_distinct', 'percentile']);

/** How the totals row combines the groups' values of a metric (and its partial sums, for avg). */
function totalOf(m: AggregateMetricPlan, j: number): string {
  switch (m.op) {
    case 'count':
      return `coalesce(sum("~a${j}"), 0)`;
    case 'avg':
      return `sum("~s${j}") / nullif(sum("~n${j}"), 0)`;
    case 'sum':
      return `sum("~a${j}")`;
    default:
      return `${m.op}("~a${j}")`;
  }
}

/**
 * One statement: the matched rows with each dimension and metric input ("~base"); the groups ("~agg");
 * then the page of groups after the cursor, the first group (of all, not just the page) that holds money
 * in more than one currency, and the totals. The totals are combined from the groups (a hashed GROUP BY,
 * one pass) unless a metric needs the rows again (count_distinct, percentile): then groups and totals are
 * two grouping sets of one pass, which PostgreSQL sorts for, as it sorts for those metrics anyway.
 */
function statement(
  catalog: QueryCatalog,
  plan: AggregatePlan,
  where: string,
  joins: string[],
  remoteJoins: string[],
  params: Params,
  keys: SortKey[],
  after: string,
): string {
  const dims = plan.dimensions.map((d, i) => `${dimensionSql(d, params)} AS "~g${i}"`);
  const inputs = plan.metrics.flatMap((m, j) => [`${m.field ? m.field.sql : 'NULL'} AS "~m${j}"`, ...(m.currency ? [`${m.currency.sql} AS "~c${j}"`] : [])]);
  const from = `${catalog.table} ${catalog.alias} ${joins.map((name) => catalog.joins[name].clause).join(' ')} ${remoteJoins.join(' ')}`;
  const base = `SELECT ${[...dims, ...inputs, 'TRUE AS "~row"'].join(', ')} FROM ${from} WHERE ${scoped(catalog, where)}`;
  const groupCols = plan.dimensions.map((_, i) => `"~g${i}"`);
  const money = plan.metrics.flatMap((m, j) => (m.currency ? [j] : []));
  // A group mixes currencies when its values' lowest and highest currency differ: a test the totals can combine too.
  const aggregates = plan.metrics.flatMap((m, j) => [
    `${aggregateOf(m, j, params)} AS "~a${j}"`,
    ...(m.op === 'avg' ? [`sum("~m${j}") AS "~s${j}"`, `count("~m${j}") AS "~n${j}"`] : []),
    ...(m.currency ? [`min("~c${j}") FILTER (WHERE "~m${j}" IS NOT NULL) AS "~lo${j}"`, `max("~c${j}") FILTER (WHERE "~m${j}" IS NOT NULL) AS "~hi${j}"`] : []),
  ]);
  const whole = groupCols.length > 0 && plan.metrics.some((m) => WHOLE.has(m.op));
  const agg = !groupCols.length
    ? `SELECT 1 AS "~total", ${aggregates.join(', ')} FROM "~base"`
    : whole
      ? `SELECT GROUPING(${groupCols.join(', ')}) AS "~total", ${[...groupCols, ...aggregates].join(', ')} FROM "~base" GROUP BY GROUPING SETS ((${groupCols.join(', ')}), ())`
      : `SELECT 0 AS "~total", ${[...groupCols, ...aggregates].join(', ')} FROM "~base" GROUP BY ${groupCols.join(', ')}`;
  const zones = plan.dimensions.map((d) => (d.kind === 'interval' ? params.bind(d.timeZone, 'text') : ''));
  const mixed = (lo: string, hi: string) => `coalesce(${lo} <> ${hi}, FALSE)`;
  // Every part answers the same columns: the dimensions, the metrics, the currency tests, the cursor keys and the buckets' offsets.
  const columns = (totals: boolean) =>
    [
      ...groupCols.map((g) => (totals ? `NULL AS ${g}` : g)),
      ...plan.metrics.map((m, j) => `${totals ? totalOf(m, j) : `"~a${j}"`} AS "~a${j}"`),
      ...money.map((j) => `${totals ? mixed(`min("~lo${j}")`, `max("~hi${j}")`) : mixed(`"~lo${j}"`, `"~hi${j}"`)} AS "~x${j}"`),
      ...keys.map((k, i) => `${totals ? 'NULL' : `(${k.sql})::text`} AS "~k${i}"`),
      ...plan.dimensions.flatMap((d, i) =>
        d.kind === 'interval'
          ? [`${totals ? 'NULL' : `EXTRACT(EPOCH FROM ("~g${i}" AT TIME ZONE ${zones[i]}) - ("~g${i}" AT TIME ZONE 'UTC'))::int`} AS "~o${i}"`]
          : [],
      ),
    ].join(', ');
  const mixedGroup = money.map((j) => mixed(`"~lo${j}"`, `"~hi${j}"`)).join(' OR ');
  const order = keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  const totals =
    groupCols.length && !whole
      ? `(SELECT 2 AS "~part", ${columns(true)} FROM "~agg")`
      : `(SELECT 2 AS "~part", ${columns(false)} FROM "~agg" WHERE "~total" <> 0)`;
  const parts = [
    ...(groupCols.length
      ? [`(SELECT 0 AS "~part", ${columns(false)} FROM "~agg" WHERE "~total" = 0 AND ${after} ORDER BY ${order} LIMIT ${plan.limit + 1})`]
      : []),
    ...(groupCols.length && money.length ? [`(SELECT 1 AS "~part", ${columns(false)} FROM "~agg" WHERE "~total" = 0 AND (${mixedGroup}) LIMIT 1)`] : []),
    totals,
  ];
  return `WITH "~base" AS (${base}), "~agg" AS (${agg}) ${parts.join(' UNION ALL ')}`;
}

function dimensionSql(d: AggregateDimensionPlan, params: Params): string {
  if (d.kind === 'interval') return `date_trunc('${d.interval}', ${d.sql}, ${params.bind(d.timeZone, 'text')})`;
  if (d.kind === 'ranges') return `width_bucket((${d.sql})::numeric, ${params.bind(d.bounds, 'numeric[]')})`;
  return d.sql!;
}

const asNumber = (value: unknown) => (typeof value === 'string' ? Number(value) : value);

function groupOf(dimensions: readonly AggregateDimensionPlan[], row: Record<string, unknown>): Record<string, AggregateValue> {
  const group: Record<string, AggregateValue> = {};
  dimensions.forEach((d, i) => {
    const value = row[`~g${i}`];
    if (value === null || value === undefined) group[d.path] = null;
    else if (d.kind === 'ranges') {
      const k = Number(value);
      group[d.path] = { from: k === 0 ? null : d.bounds[k - 1], to: k === d.bounds.length ? null : d.bounds[k] };
    } else if (d.kind === 'interval') group[d.path] = withOffset(value as Date, Number(row[`~o${i}`]));
    else if (value instanceof Date) group[d.path] = value.toISOString();
    else group[d.path] = d.type === 'number' ? (asNumber(value) as number) : (value as AggregateValue);
  });
  return group;
}

/** An instant as ISO 8601 in the local time of a zone whose offset there is `offsetSeconds`: `2026-12-01T00:00:00.000+01:00`. */
function withOffset(instant: Date, offsetSeconds: number): string {
  const local = new Date(instant.getTime() + offsetSeconds * 1000).toISOString().slice(0, -1);
  const sign = offsetSeconds < 0 ? '-' : '+';
  const abs = Math.abs(offsetSeconds);
  const hh = String(Math.floor(abs / 3600)).padStart(2, '0');
  const mm = String(Math.floor((abs % 3600) / 60)).padStart(2, '0');
  return `${local}${sign}${hh}:${mm}`;
}

/** Metrics by name; `totals` leaves a money metric null where it would add up more than one currency. */
function metricsOf(metrics: readonly AggregateMetricPlan[], row: Record<string, unknown>, totals: boolean): Record<string, number | string | null> {
  const out: Record<string, number | string | null> = {};
  metrics.forEach((m, j) => {
    const value = row[`~a${j}`];
    if (value === null || value === undefined || (totals && m.currency && row[`~x${j}`] === true)) out[m.name] = null;
    else if (value instanceof Date) out[m.name] = value.toISOString();
    else out[m.name] = asNumber(value) as number;
  });
  return out;
}

/**
 * Binds the ids the owning services answer for the filter's conditions on their records, as the query
 * does: asked only about the records that the filter's other top-level conditions leave reachable, when
 * those are few enough to send.
 */
async function bindLookups(
  dataSource: DataSource,
  catalog: QueryCatalog,
  compiled: Compiled,
  filter: unknown,
  options: QueryRunOptions,
  budget: QueryBudget,
): Promise<FieldIssue[]> {
  const max = options.relatedIdsMax ?? QueryLimits.relatedIds;
  const relations = [...new Set(compiled.lookups.map((l) => l.relation))];
  // The compiler leaves each lookup's ids as an empty array parameter tested against the reference column, numbered in lookup order.
  const slots = new Map<string, number[]>();
  for (const relation of relations) {
    const column = escapeRegExp(catalog.remotes![relation].column);
    const found = [...compiled.where.matchAll(new RegExp(`${column} = ANY\\(\\$(\\d+)::text\\[\\]\\)`, 'g'))]
      .map((m) => Number(m[1]) - 1)
      .filter((n) => Array.isArray(compiled.params[n]) && (compiled.params[n] as unknown[]).length === 0);
    const wanted = compiled.lookups.filter((l) => l.relation === relation).length;
    const unique = [...new Set(found)].sort((x, y) => x - y);
    if (unique.length !== wanted)
      return [
        {
          field: 'filter',
          code: 'invalid_value',
          message: `an empty $in or $nin on the reference to ${relation} beside a condition on ${relation}.* cannot be aggregated: drop the empty list`,
        },
      ];
    slots.set(relation, unique);
  }
  // Top-level conditions with no path into another service narrow which related records need asking about.
  const local = (node: unknown): Array<Record<string, unknown>> =>
    isPlainObject(node)
      ? Object.entries(node).flatMap(([key, value]) => {
          if (key === '$and' && Array.isArray(value)) return value.flatMap(local);
          const part = { [key]: value };
          return compileFilter(catalog, part).lookups.length ? [] : [part];
        })
      : [];
  const narrowing = compileFilter(catalog, { $and: [{}, ...local(filter)] });
  const candidates = await budget.run(dataSource, (run) =>
    Promise.all(
      relations.map((relation) => {
        const column = catalog.remotes![relation].column;
        const from = `${catalog.table} ${catalog.alias} ${narrowing.joins.map((name) => catalog.joins[name].clause).join(' ')}`;
        return run(
          `SELECT DISTINCT ${column} AS ref FROM ${from} WHERE ${scoped(catalog, narrowing.where)} AND ${column} IS NOT NULL LIMIT ${max + 1}`,
          narrowing.params,
        );
      }),
    ),
  );
  const issues: FieldIssue[] = [];
  await Promise.all(
    relations.map(async (relation, i) => {
      const lookups = compiled.lookups.filter((l) => l.relation === relation);
      const within = candidates[i].length <= max ? candidates[i].map((row) => String(row.ref)) : undefined;
      try {
        const ids = await budget.ask((waitMs) =>
          remoteOf(options).match(
            catalog.remotes![relation],
            relation,
            lookups.map(({ at, filter: f, negate }) => ({ at, filter: f, negate })),
            within,
            waitMs,
          ),
        );
        slots.get(relation)!.forEach((slot, k) => (compiled.params[slot] = ids[k]));
      } catch (err) {
        if (err instanceof DomainError && err.code === ErrorCode.ValidationFailed && err.details) issues.push(...err.details);
        else throw err;
      }
    }),
  );
  return issues;
}

/**
 * The values of the paths into other services, read from the services that keep them for every record
 * the matched rows reference (at most QUERY_RELATED_IDS_MAX per relation, past which the answer is a 400
 * that says to narrow the filter), and joined as `unnest(ids, values…)`; sets each path's SQL.
 */
async function readRemotePaths(
  dataSource: DataSource,
  catalog: QueryCatalog,
  compiled: Compiled,
  joins: string[],
  paths: AggregatePath[],
  params: Params,
  options: QueryRunOptions,
  budget: QueryBudget,
): Promise<string[]> {
  const byRelation = new Map<string, AggregatePath[]>();
  for (const path of paths) if (path.relation) byRelation.set(path.relation, [...(byRelation.get(path.relation) ?? []), path]);
  if (!byRelation.size) return [];
  const max = options.relatedIdsMax ?? QueryLimits.relatedIds;
  const relations = [...byRelation.keys()];
  const from = `${catalog.table} ${catalog.alias} ${joins.map((name) => catalog.joins[name].clause).join(' ')}`;
  const references = await budget.run(dataSource, (run) =>
    Promise.all(
      relations.map((relation) => {
        const column = catalog.remotes![relation].column;
        return run(
          `SELECT DISTINCT ${column} AS ref FROM ${from} WHERE ${scoped(catalog, compiled.where)} AND ${column} IS NOT NULL LIMIT ${max + 1}`,
          compiled.params,
        );
      }),
    ),
  );
  const issues: FieldIssue[] = [];
  const clauses: string[] = [];
  for (const [r, relation] of relations.entries()) {
    const related = byRelation.get(relation)!;
    const ids = references[r].map((row) => String(row.ref));
    if (ids.length > max) {
      issues.push({
        field: related[0].at,
        code: 'too_many_matches',
        message: `'${related[0].path}' is kept by another service, which is asked for the values of each ${relation} the matched records reference; they reference more than ${max}: narrow the filter with conditions ANDed at its top level`,
      });
      continue;
    }
    const unique = [...new Set(related.map((p) => p.path))];
    const records: Record<string, Record<string, unknown>> = {};
    // The owning service answers as many records as fit in one message: ask again from where it stopped.
    for (let start = 0; start < ids.length;) {
      const asked = ids.slice(start);
      const answer = await budget.ask((waitMs) =>
        remoteOf(options).values(
          catalog.remotes![relation],
          relation,
          asked,
          unique.map((path) => ({ at: path, path })),
          waitMs,
        ),
      );
      Object.assign(records, answer.records);
      start += Math.max(1, answer.delivered);
    }
    const alias = `"~rv${r}"`;
    const columns = unique.map((path) => {
      const type = related.find((p) => p.path === path)!.type;
      return params.bind(
        ids.map((id) => textOf(records[id]?.[path], type)),
        'text[]',
      );
    });
    clauses.push(
      `LEFT JOIN unnest(${params.bind(ids, 'text[]')}, ${columns.join(', ')}) AS ${alias}("~id", ${unique.map((_, k) => `v${k}`).join(', ')}) ON ${alias}."~id" = ${catalog.remotes![relation].column}`,
    );
    for (const path of related) path.sql = `${alias}.v${unique.indexOf(path.path)}::${CAST[path.type]}`;
  }
  if (issues.length) throw validationFailed(issues);
  return clauses;
}

const OFFSET_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** A related record's value as text of its type; a value stored with another JSON type than its field's counts as null, as in the query. */
function textOf(value: unknown, type: QueryFieldType): string | null {
  if (value === null || value === undefined) return null;
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value) ? String(value) : null;
  if (type === 'boolean') return typeof value === 'boolean' ? String(value) : null;
  // With its offset, so the cast to timestamptz cannot read the session's zone; custom_instant reads no other kind.
  if (type === 'datetime') return typeof value === 'string' && OFFSET_DATETIME.test(value) && !Number.isNaN(Date.parse(value)) ? value : null;
  return typeof value === 'string' ? value : null;
}
