import { Logger } from '@crm/common';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'crypto';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { LOGGER } from '@crm/runtime';

/** One custom date-time field whose values an expression index over `custom_instant` should serve. */
export interface InstantIndexTarget {
  table: string;
  /** The jsonb column holding the values, as SQL (`custom_fields`, `"values"`). */
  column: string;
  field: string;
  /** For a table holding many objects' records: the object's rows only (a partial index). */
  scope?: { column: string; value: string };
}

/** Where a service's date-time fields are defined, and which tables their indexes go on. */
export interface InstantIndexSource {
  tables: readonly string[];
  targets(m: EntityManager): Promise<InstantIndexTarget[]>;
}

const SUFFIX = '_instant';
const MAX_NAME_BYTES = 63;
const hash8 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const ident = (text: string) => `"${text.replace(/"/g, '""')}"`;

/**
 * `<table>_cf_<field>_instant` (a scoped target adds a hash of its scope, as object ids are long). A name
 * past PostgreSQL's 63 bytes would be truncated by it, and two long fields would then share one index name,
 * so such a name is cut shorter and ends with a hash of the whole.
 */
export function instantIndexName(target: InstantIndexTarget): string {
  const base = `${target.table}_cf_${target.field}${target.scope ? `_${hash8(`${target.scope.column}=${target.scope.value}`)}` : ''}`;
  const name = `${base}${SUFFIX}`;
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  return `${base.slice(0, MAX_NAME_BYTES - SUFFIX.length - 9)}_${hash8(base)}${SUFFIX}`;
}

/** The SQL the query catalog reads a custom date-time through (customFields in query-catalog.ts); an index serves a query only over this very expression. */
export function instantExpression(target: InstantIndexTarget): string {
  return `custom_instant(${target.column}->${literal(target.field)})`;
}

/** How often indexes are checked without being asked: a replica that died mid-build leaves its work to this. */
const SWEEP_MS = 10 * 60_000;
/** While another replica holds the builder's lock. */
const RETRY_MS = 5_000;
/** After a failed pass: a lock not had within lock_timeout, a lost connection. */
const FAILED_RETRY_MS = 30_000;
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Keeps one expression index over `custom_instant(<column>->'<field>')` for every custom date-time field,
 * so ranges and sorts on it read an index (docs/query.md, "Indexes"). The definitions are the truth: a pass
 * builds what is missing, rebuilds what an interrupted build left INVALID, and drops the indexes of fields
 * renamed or removed. Passes run after a field change commits (never inside the request: CREATE INDEX
 * CONCURRENTLY cannot run in a transaction, and a request must not wait for a build), at start (so the
 * fields of an older release get theirs) and every SWEEP_MS. Passes never overlap: in this process a
 * request during a pass asks for one more, and across replicas a session advisory lock is tried, not
 * waited for (a waiting statement holds a snapshot, which the other replica's CONCURRENTLY build would wait on).
 */
@Injectable()
export class CustomInstantIndexes implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly sources: InstantIndexSource[] = [];
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Called by the services that define fields, from their constructors (before bootstrap). */
  register(source: InstantIndexSource): void {
    this.sources.push(source);
  }

  onApplicationBootstrap(): void {
    this.refresh();
  }

  /** Waits for the statement in progress: an index build cut off here would be left INVALID (and rebuilt at the next start). */
  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Asks for a pass soon; never throws, and does not wait for it. */
  refresh(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.pass()
      .then((done) => this.schedule(done ? SWEEP_MS : RETRY_MS))
      .catch((err: Error & { code?: string }) => {
        // A role without DDL rights (DATABASE_MIGRATIONS=verify deployments) cannot build them; retrying soon would not help.
        const denied = err.code === INSUFFICIENT_PRIVILEGE;
        this.logger.warn(
          { err: err.message },
          denied ? "custom date-time indexes need the tables' owner; not built" : 'custom date-time index pass failed; retrying',
        );
        this.schedule(denied ? SWEEP_MS : FAILED_RETRY_MS);
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), ms).unref();
  }

  /** False when another replica holds the lock (it is doing the same work; this one looks again soon). */
  private async pass(): Promise<boolean> {
    if (!this.sources.length) return true;
    const q = this.dataSource.createQueryRunner();
    try {
      await q.connect();
      const [{ locked }] = (await q.query(`SELECT pg_try_advisory_lock(hashtext(current_schema() || '.custom_instant_indexes')) AS locked`)) as Array<{
        locked: boolean;
      }>;
      if (!locked) return false;
      try {
        // The builds' locks conflict with VACUUM and DDL on the table only; one that cannot be had soon fails
        // (leaving an INVALID index, rebuilt by the next pass) instead of queueing other DDL behind it.
        await q.query(`SET lock_timeout = '5s'`);
        await this.reconcile(q);
      } finally {
        await q.query(`RESET lock_timeout`);
        await q.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.custom_instant_indexes'))`);
      }
      return true;
    } finally {
      await q.release();
    }
  }

  private async reconcile(q: QueryRunner): Promise<void> {
    const wanted = new Map<string, InstantIndexTarget>();
    for (const source of this.sources) for (const target of await source.targets(q.manager)) wanted.set(instantIndexName(target), target);
    const tables = [...new Set(this.sources.flatMap((s) => s.tables))];
    // Ours by name and by expression, so an index made by hand under another name is left alone.
    const existing = (await q.query(
      `SELECT c.relname AS name, i.indisvalid AS valid
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND t.relname = ANY($1)
          AND c.relname LIKE '%\\_cf\\_%\\_instant' AND pg_get_indexdef(i.indexrelid) LIKE '%custom_instant(%'`,
      [tables],
    )) as Array<{ name: string; valid: boolean }>;
    for (const index of existing) {
      if (this.stopped) return;
      if (wanted.has(index.name) && index.valid) {
        wanted.delete(index.name);
        continue;
      }
      // A removed or renamed field's index, or a build that did not finish (IF NOT EXISTS would keep it).
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${ident(index.name)}`);
      this.logger.info({ index: index.name, valid: index.valid }, 'dropped custom date-time index');
    }
    for (const [name, target] of wanted) {
      if (this.stopped) return;
      const where = target.scope ? ` WHERE ${ident(target.scope.column)} = ${literal(target.scope.value)}` : '';
      await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${ident(name)} ON ${ident(target.table)} (${instantExpression(target)})${where}`);
      this.logger.info({ index: name }, 'built custom date-time index');
    }
  }
}
