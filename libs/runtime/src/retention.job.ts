import { isRetained, Logger, RetainedTable, RetentionSettings, TableRetention } from '@crm/common';
import { BeforeApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { deleteInBatches, PeriodicJob } from './periodic-job';

/**
 * One per service: deletes, every interval of its settings, the rows of each table the service declares
 * `sweptBy: 'retention-job'` that are older than the table's setting, oldest first, in batches of at most
 * its batch size, each in its own short transaction (no lock on the table, no long one on a row);
 * a transaction-scoped advisory lock per table lets one replica delete at a time. A table whose setting is 0
 * keeps everything. Tables another job already kept short (the event log, the change history, deliveries)
 * are declared with that job's name and left to it.
 */
export class RetentionJob extends PeriodicJob implements BeforeApplicationShutdown {
  /** Rows deleted since start, by table: how tests, and anyone debugging, see what sweeps did. */
  readonly removed = new Map<string, number>();
  sweeps = 0;
  private readonly tables: RetainedTable[];
  private readonly days: Map<string, number>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly schema: string,
    tables: readonly TableRetention[],
    private readonly settings: RetentionSettings,
    logger: Logger,
  ) {
    const swept = tables.filter(isRetained).filter((t) => t.sweptBy === 'retention-job');
    const days = new Map(swept.map((t) => [t.table, settings.days[t.setting] ?? 0]));
    super(logger, {
      intervalMs: settings.intervalMs,
      failure: 'retention sweep failed; retrying next interval',
      enabled: swept.some((t) => (days.get(t.table) ?? 0) > 0),
    });
    this.tables = swept;
    this.days = days;
  }

  protected async run(): Promise<void> {
    await this.sweep();
  }

  /**
   * A provider of the service's root module, which Nest shuts down after the database's: the sweep in
   * progress is waited for before any module's shutdown starts.
   */
  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** One sweep of every table: answers the rows deleted from each. */
  async sweep(): Promise<Record<string, number>> {
    const done: Record<string, number> = {};
    for (const t of this.tables) {
      const days = this.days.get(t.table) ?? 0;
      if (days <= 0 || this.task.stopping) continue;
      const keep = t.keep ? ` AND NOT coalesce((${t.keep}), false)` : '';
      done[t.table] = await deleteInBatches(this.dataSource, {
        lock: `crm:retention:${this.schema}.${t.table}`,
        sql: `DELETE FROM ${t.table} WHERE ${t.key} = ANY (ARRAY(
                SELECT ${t.key} FROM ${t.table} WHERE ${t.column} < now() - make_interval(secs => $1)${keep}
                ORDER BY ${t.column} LIMIT $2 FOR UPDATE SKIP LOCKED))`,
        params: [days * 86_400],
        batchSize: this.settings.batchSize,
        stopping: () => this.task.stopping,
        onBatch: (n) => this.removed.set(t.table, (this.removed.get(t.table) ?? 0) + n),
      });
      if (done[t.table]) this.logger.info({ table: t.table, removed: done[t.table] }, 'deleted rows past their retention period');
    }
    this.sweeps += 1;
    return done;
  }
}
