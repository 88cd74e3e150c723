import { countWithinBudget, DomainError, ErrorCode, FieldIssue, PAGE_BYTE_BUDGET, validationFailed } from '@crm/common';
import { ObjectService, QueryFieldInfo, QueryLimits, RemoteLookup, RemoteValuesReply } from '@crm/contracts';
import { DataSource } from 'typeorm';
import { FilterCompiler, isPlainObject, PendingLookup } from './filter-compiler';
import { QueryBudget, QueryRunOptions } from './query-budget';
import { QueryCatalog, remoteRelationOf, scoped, shownValue } from './query-catalog';

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
  via: ObjectService;
}

/** How a query reaches the services that keep the records of its remote relations; `waitMs` is how long it waits for the answer. */
export interface RemoteQueries {
  match(relation: RemoteRelation, prefix: string, lookups: RemoteLookup[], within: string[] | undefined, waitMs: number): Promise<string[][]>;
  values(relation: RemoteRelation, prefix: string, ids: string[], fields: Array<{ at: string; path: string }>, waitMs: number): Promise<RemoteValuesReply>;
  fields(relation: RemoteRelation, prefix: string): Promise<QueryFieldInfo[]>;
}

/**
 * Answers the compiler's conditions on remote relations: asks each owning service for the ids that match
 * (one call per relation, within the candidates the local part of `filter` leaves when they are few) and
 * binds them into their parameters. Returns the problems the owners found; the compiler's own issues are
 * the caller's to report (when there are any, the candidates are not read, as the local filter is wrong).
 */
export async function resolveRemoteConditions(
  dataSource: DataSource,
  catalog: QueryCatalog,
  compiler: FilterCompiler,
  filter: unknown,
  options: QueryRunOptions,
  budget: QueryBudget,
): Promise<FieldIssue[]> {
  if (!compiler.lookups.length) return [];
  const within = compiler.issues.length
    ? new Map<string, string[]>()
    : await candidateReferences(dataSource, catalog, filter, compiler.lookups, options, budget);
  return resolveLookups(compiler, catalog, within, options.remote, budget);
}

/** The catalog's way to other services; a catalog with remote relations run without one is a bug of its service. */
export function remoteOf(remote: RemoteQueries | undefined): RemoteQueries {
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
  lookups: readonly PendingLookup[],
  options: QueryRunOptions,
  budget: QueryBudget,
): Promise<Map<string, string[]>> {
  const max = options.relatedIdsMax ?? QueryLimits.relatedIds;
  const guard = new FilterCompiler(catalog);
  const where = guard.filter({ $and: [{}, ...localConjuncts(filter, catalog)] });
  const joins = guard.joinClauses();
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
  q: FilterCompiler,
  catalog: QueryCatalog,
  within: ReadonlyMap<string, string[]>,
  remote: RemoteQueries | undefined,
  budget: QueryBudget,
): Promise<FieldIssue[]> {
  const byRelation = new Map<string, PendingLookup[]>();
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
  const q = new FilterCompiler(catalog);
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
  const q = new FilterCompiler(catalog);
  const fields = paths.map(({ at, path }) => ({ path, field: q.field(path, at) }));
  if (q.issues.length) throw validationFailed(q.issues);
  if (!ids.length) return { records: {}, delivered: 0 };
  const a = catalog.alias;
  const sql = `SELECT ${a}.id AS id, ${fields.map(({ field }, i) => `${field!.select ?? field!.sql} AS "~f${i}"`).join(', ')} FROM ${catalog.table} ${a} WHERE ${scoped(catalog, `${a}.id = ANY($1::text[])`)}`;
  const rows = await new QueryBudget(options.timeoutMs).run(dataSource, (run) => run(sql, [ids]));
  const found = new Map(rows.map((row) => [String(row.id), Object.fromEntries(fields.map(({ path, field }, i) => [path, shownValue(field!, row[`~f${i}`])]))]));
  // In the order asked, as many as fit in one reply (at least one): the asking query ends its page there.
  const delivered = countWithinBudget(
    ids.map((id) => found.get(id) ?? null),
    PAGE_BYTE_BUDGET,
  );
  const records: Record<string, Record<string, unknown>> = {};
  for (const id of ids.slice(0, delivered)) if (found.has(id)) records[id] = found.get(id)!;
  return { records, delivered };
}
