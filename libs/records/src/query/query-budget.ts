import { DomainError, Env, ErrorCode, intVar, isQueryCanceled } from '@crm/common';
import { QueryLimits } from '@crm/contracts';
import { timeLeftMs } from '@crm/messaging';
import { performance } from 'perf_hooks';
import { DataSource } from 'typeorm';
import type { RemoteQueries } from './remote-matching';

/**
 * Kept back from the time a caller waits: a service stops this long before, so that its answer that the
 * budget is spent reaches the caller while it still listens, over the wire and a loaded event loop.
 */
export const REPLY_HEADROOM_MS = 500;

/** Settings only some roles may set (PostgreSQL's PGC_SUSET), set where the role may. */
const GUARDED_SETTINGS = new Set(['temp_file_limit']);

/** What a query past its budget is told to narrow. */
export const QUERY_HINT =
  'Narrow it with a condition on an indexed field (id, a unique field, created_at, a foreign key) or a shorter range, or sort on one of those.';

/** Runs one statement of a read: its rows, as the caller types them. */
export type RunStatement = <R extends object = Record<string, unknown>>(sql: string, params: unknown[]) => Promise<R[]>;

/**
 * The time one request has for a read (docs/query.md): every statement it runs, and every part another
 * service answers for it, comes out of the same budget. It ends QUERY_TIMEOUT_MS after it starts or
 * REPLY_HEADROOM_MS before the request's caller stops waiting (withDeadline), whichever is sooner. Past
 * it the read is a `400 query_too_expensive` with the hint, and nothing more is started for it.
 */
export class QueryBudget {
  /** The budget as it started, which the caller's deadline may have cut below QUERY_TIMEOUT_MS. */
  readonly budgetMs: number;
  private readonly endsAt: number;

  constructor(
    timeoutMs: number,
    private readonly hint = QUERY_HINT,
  ) {
    const callerWaits = timeLeftMs();
    this.budgetMs = Math.max(0, Math.floor(callerWaits === undefined ? timeoutMs : Math.min(timeoutMs, callerWaits - REPLY_HEADROOM_MS)));
    this.endsAt = performance.now() + this.budgetMs;
  }

  /** Whole milliseconds left; a `query_too_expensive` when none are. */
  left(): number {
    const left = Math.floor(this.endsAt - performance.now());
    if (left < 1) throw this.spent();
    return left;
  }

  spent(): DomainError {
    return new DomainError(ErrorCode.QueryTooExpensive, `The query ran past its ${this.budgetMs} ms budget. ${this.hint}`);
  }

  /**
   * Runs statements in one read-only transaction, each under a statement timeout of the time left, so the
   * read holds its connection no longer than the budget however many statements it takes. `settings`
   * (e.g. work_mem) hold for the transaction alone.
   *
   * Round trips are what a small read costs on a loaded machine, so the transaction opens with its first
   * timeout and settings in one simple-protocol message (every value in it is a number or one of ours,
   * never the client's), and it ends after the answer is handed back: a read-only transaction has nothing
   * to commit, so the caller does not wait for it; the connection returns to the pool once it has ended.
   * `repeatable` gives every statement one snapshot, for reads whose figures must agree with each other.
   */
  async run<T>(
    dataSource: DataSource,
    work: (run: RunStatement) => Promise<T>,
    settings: Record<string, string> = {},
    { repeatable = false }: { repeatable?: boolean } = {},
  ): Promise<T> {
    this.left();
    const runner = dataSource.createQueryRunner();
    let ending = 'ROLLBACK';
    try {
      await runner.connect();
      const sets = Object.entries(settings).map(([name, value]) => {
        if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(value)) throw new Error(`query setting ${name}=${value} is not a plain word`);
        // temp_file_limit is a superuser's setting unless granted (GRANT SET ON PARAMETER): a role without
        // the grant reads without it rather than failing every read.
        if (GUARDED_SETTINGS.has(name)) return `, (SELECT set_config('${name}', '${value}', true) WHERE has_parameter_privilege('${name}', 'SET'))`;
        return `, set_config('${name}', '${value}', true)`;
      });
      await runner.query(
        `BEGIN ${repeatable ? 'ISOLATION LEVEL REPEATABLE READ ' : ''}READ ONLY; SELECT set_config('statement_timeout', '${this.left()}', true)${sets.join('')}`,
      );
      let first = true;
      const result = await work(async <R>(sql: string, params: unknown[]) => {
        if (!first) await runner.query(`SELECT set_config('statement_timeout', $1, true)`, [String(this.left())]);
        first = false;
        return (await runner.query(sql, params)) as R[];
      });
      ending = 'COMMIT';
      return result;
    } catch (err) {
      if (isQueryCanceled(err)) throw this.spent();
      throw err;
    } finally {
      void runner
        .query(ending)
        .catch(() => undefined)
        .finally(() => runner.release());
    }
  }

  /**
   * Asks another service for its part of the read: told to wait the time left plus the headroom that
   * service keeps back, it spends no more than the time left here. No answer by then is the budget spent.
   */
  async ask<T>(call: (waitMs: number) => Promise<T>): Promise<T> {
    const left = this.left();
    try {
      return await call(left + REPLY_HEADROOM_MS);
    } catch (err) {
      if (err instanceof DomainError && err.code === ErrorCode.ServiceUnavailable && this.endsAt <= performance.now()) throw this.spent();
      throw err;
    }
  }
}

/** The statement budget of a query: as configured, but always under the RPC deadline, so the client hears why. */
export function queryBudgetMs(configuredMs: number, rpcTimeoutMs: number): number {
  return Math.max(1, Math.min(configuredMs, rpcTimeoutMs - REPLY_HEADROOM_MS));
}

/** A service's settings for the queries it answers (docs/deployment.md). */
export interface QuerySettings {
  /**
   * Longest a `POST /<object>/query` (or `GET /changes`) may take, all its statements and the parts other
   * services answer together, before it is answered `query_too_expensive`; kept under RPC_TIMEOUT_MS, so
   * the client hears why rather than a 503.
   */
  queryTimeoutMs: number;
  /** Most records one condition of another service's query may match here (`contact.email` on deals). */
  queryRelatedIdsMax: number;
  /**
   * Memory one aggregation statement may use per sort or hash (work_mem), and the temporary files all of
   * them may write together past it (temp_file_limit): a grouping by a high-cardinality path spills to
   * disk and then stops there, a `400 query_too_expensive`, rather than filling the database's disk.
   */
  aggregateWorkMem: string;
  aggregateTempFileLimit: string;
}

/** A PostgreSQL memory size, as the settings take it: a number and a unit. */
const memoryVar = (env: Env, name: string, fallback: string): string => {
  const value = env[name]?.trim() || fallback;
  if (!/^[0-9]+(kB|MB|GB)$/.test(value)) throw new Error(`${name} must be a size such as 64MB (kB, MB or GB), got '${value}'`);
  return value;
};

export function loadQuerySettings(env: Env): QuerySettings {
  return {
    queryTimeoutMs: intVar(env, 'QUERY_TIMEOUT_MS', 3000, { min: 10, max: 60000 }),
    // One condition's ids travel in one answer between services, kept to half a megabyte: 15,000 ids fill it.
    queryRelatedIdsMax: intVar(env, 'QUERY_RELATED_IDS_MAX', QueryLimits.relatedIds, { min: 1, max: 15_000 }),
    aggregateWorkMem: memoryVar(env, 'AGGREGATE_WORK_MEM', '64MB'),
    aggregateTempFileLimit: memoryVar(env, 'AGGREGATE_TEMP_FILE_LIMIT', '1GB'),
  };
}

/** How a service runs queries under its settings and its RPC deadline. */
export function queryRunOptions(settings: QuerySettings, rpcTimeoutMs: number): QueryRunOptions {
  return {
    timeoutMs: queryBudgetMs(settings.queryTimeoutMs, rpcTimeoutMs),
    relatedIdsMax: settings.queryRelatedIdsMax,
    memory: { work_mem: settings.aggregateWorkMem, temp_file_limit: settings.aggregateTempFileLimit },
  };
}

export interface QueryRunOptions {
  /** Longest a query may run, all its statements and remote parts together, before it is answered `query_too_expensive`. */
  timeoutMs: number;
  /** Most records one remote condition may match (QueryLimits.relatedIds unless set). */
  relatedIdsMax?: number;
  /** Required when the catalog has remote relations. */
  remote?: RemoteQueries;
  /** An aggregation's work_mem and temp_file_limit (QuerySettings); AGGREGATE_SETTINGS unless set. */
  memory?: { work_mem: string; temp_file_limit: string };
}
