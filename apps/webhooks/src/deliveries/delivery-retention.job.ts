import { Logger } from '@crm/common';
import { deleteInBatches, LOGGER, PeriodicJob } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WEBHOOKS_SETTINGS, WebhooksSettings } from '../config/webhooks.settings';

const LOCK = 'crm:webhooks:retention';

/** What one sweep did. */
export interface RetentionSweep {
  deliveriesRemoved: number;
  /** DELETE statements that removed something; each removes at most WEBHOOKS_RETENTION_BATCH_SIZE rows. */
  batches: number;
  largestBatch: number;
  previousSecretsCleared: number;
}

/**
 * Deletes delivery attempts older than WEBHOOKS_DELIVERY_RETENTION_DAYS every WEBHOOKS_RETENTION_INTERVAL_MS,
 * oldest first, in batches of at most WEBHOOKS_RETENTION_BATCH_SIZE rows, each in its own short transaction so
 * a large backlog never holds long locks. A transaction-scoped advisory lock lets one replica delete at a time.
 * The same sweep clears secrets whose rotation overlap is over.
 */
@Injectable()
export class DeliveryRetentionJob extends PeriodicJob {
  /** Totals since this process started: how tests, and anyone debugging, see that sweeps ran. */
  readonly totals: RetentionSweep & { sweeps: number } = { sweeps: 0, deliveriesRemoved: 0, batches: 0, largestBatch: 0, previousSecretsCleared: 0 };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, { intervalMs: settings.retentionIntervalMs, failure: 'webhook retention sweep failed; retrying next interval' });
  }

  protected async run(): Promise<void> {
    const sweep = await this.sweep();
    this.totals.sweeps += 1;
    this.totals.deliveriesRemoved += sweep.deliveriesRemoved;
    this.totals.batches += sweep.batches;
    this.totals.largestBatch = Math.max(this.totals.largestBatch, sweep.largestBatch);
    this.totals.previousSecretsCleared += sweep.previousSecretsCleared;
    if (sweep.deliveriesRemoved) {
      this.logger.info({ removed: sweep.deliveriesRemoved, batches: sweep.batches }, 'pruned webhook delivery attempts past the retention period');
    }
  }

  async sweep(): Promise<RetentionSweep> {
    const sweep: RetentionSweep = { deliveriesRemoved: 0, batches: 0, largestBatch: 0, previousSecretsCleared: 0 };
    const { deliveryRetentionDays: days, retentionBatchSize: batchSize } = this.settings;
    if (days > 0) {
      sweep.deliveriesRemoved = await deleteInBatches(this.dataSource, {
        lock: LOCK,
        sql: `DELETE FROM deliveries WHERE id IN (
                SELECT id FROM deliveries WHERE created_at < now() - make_interval(days => $1)
                ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        params: [days],
        batchSize,
        stopping: () => this.task.stopping,
        onBatch: (removed) => {
          sweep.batches += 1;
          sweep.largestBatch = Math.max(sweep.largestBatch, removed);
        },
      });
    }
    const [, cleared] = (await this.dataSource.query(
      `UPDATE subscriptions SET previous_secret = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= now()`,
    )) as [unknown[], number];
    sweep.previousSecretsCleared = cleared;
    return sweep;
  }
}
