import { Logger } from '@crm/common';
import { LOGGER, PeriodicTask } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
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
export class DeliveryRetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  /** Totals since this process started: how tests, and anyone debugging, see that sweeps ran. */
  readonly totals: RetentionSweep & { sweeps: number } = { sweeps: 0, deliveriesRemoved: 0, batches: 0, largestBatch: 0, previousSecretsCleared: 0 };
  private readonly task: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.task = new PeriodicTask(
      settings.retentionIntervalMs,
      async () => {
        const sweep = await this.sweep();
        this.totals.sweeps += 1;
        this.totals.deliveriesRemoved += sweep.deliveriesRemoved;
        this.totals.batches += sweep.batches;
        this.totals.largestBatch = Math.max(this.totals.largestBatch, sweep.largestBatch);
        this.totals.previousSecretsCleared += sweep.previousSecretsCleared;
        if (sweep.deliveriesRemoved) {
          this.logger.info({ removed: sweep.deliveriesRemoved, batches: sweep.batches }, 'pruned webhook delivery attempts past the retention period');
        }
      },
      (err) => this.logger.warn({ err: err.message }, 'webhook retention sweep failed; retrying next interval'),
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  async sweep(): Promise<RetentionSweep> {
    const sweep: RetentionSweep = { deliveriesRemoved: 0, batches: 0, largestBatch: 0, previousSecretsCleared: 0 };
    const { deliveryRetentionDays: days, retentionBatchSize: batch } = this.settings;
    while (days > 0 && !this.task.stopping) {
      const removed = await this.dataSource.transaction(async (m) => {
        const [{ locked }] = (await m.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [LOCK])) as { locked: boolean }[];
        if (!locked) return 0;
        const [, count] = (await m.query(
          `DELETE FROM deliveries WHERE id IN (
             SELECT id FROM deliveries WHERE created_at < now() - make_interval(days => $1)
             ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
          [days, batch],
        )) as [unknown[], number];
        return count;
      });
      if (!removed) break;
      sweep.deliveriesRemoved += removed;
      sweep.batches += 1;
      sweep.largestBatch = Math.max(sweep.largestBatch, removed);
      if (removed < batch) break;
    }
    const [, cleared] = (await this.dataSource.query(
      `UPDATE subscriptions SET previous_secret = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at <= now()`,
    )) as [unknown[], number];
    sweep.previousSecretsCleared = cleared;
    return sweep;
  }
}
