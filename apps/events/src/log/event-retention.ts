import { Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import { deleteInBatches, LOGGER, PeriodicJob } from '@crm/runtime';
import { DataSource } from 'typeorm';
import { EVENTS_SETTINGS, EventsSettings } from './events.settings';

/**
 * Prunes events older than EVENTS_RETENTION_DAYS (off by default: the log is kept for ever), from the log's
 * start, at most EVENTS_PRUNE_BATCH_SIZE a statement, each batch in its own short transaction, so a prune of
 * millions never holds a long lock or a huge transaction. Each batch raises `log_checkpoint.pruned_through`
 * to the highest position it deleted, in the same transaction: a cursor before it points into history the
 * log no longer holds, and answers `410 cursor_expired` (docs/events.md, "Retention").
 */
@Injectable()
export class EventRetention extends PeriodicJob {
  /** Events deleted, and DELETE statements that deleted some, since start: what tests and debugging see. */
  removed = 0;
  batches = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, { intervalMs: settings.pruneIntervalMs, failure: 'event retention sweep failed', enabled: settings.retentionDays > 0 });
  }

  protected async run(): Promise<void> {
    const removed = await deleteInBatches(this.dataSource, {
      lock: 'crm:event-retention',
      // The log is pruned from its start only: a batch is the oldest positions up to the first event still in
      // the window, so what is gone is always every position up to `pruned_through` and a cursor is expired
      // exactly when it is below it. (Positions follow recording times to within a transaction's length, so
      // an event past the window behind a younger one waits for it, milliseconds.)
      sql: `WITH head AS (
              SELECT position, recorded_at < now() - make_interval(days => $1) AS expired FROM events
              ORDER BY position LIMIT $2),
            batch AS (
              SELECT position FROM head
              WHERE position < coalesce((SELECT min(position) FROM head WHERE NOT expired), 9223372036854775807)),
            mark AS (
              UPDATE log_checkpoint SET pruned_through = GREATEST(pruned_through, (SELECT max(position) FROM batch))
              WHERE EXISTS (SELECT 1 FROM batch))
            DELETE FROM events WHERE position IN (SELECT position FROM batch)`,
      params: [this.settings.retentionDays],
      batchSize: this.settings.pruneBatchSize,
      stopping: () => this.task.stopping,
      onBatch: (n) => {
        this.removed += n;
        this.batches += 1;
      },
    });
    if (removed) this.logger.info({ removed }, 'pruned events past the retention period');
  }
}
