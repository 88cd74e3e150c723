import { Logger } from '@crm/common';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER, PeriodicTask } from '@crm/runtime';
import { DataSource } from 'typeorm';
import { EVENTS_SETTINGS, EventsSettings } from './events.settings';

/**
 * Prunes events older than EVENTS_RETENTION_DAYS (off by default: the log is kept for ever). Cursors
 * stay valid after a prune; a poller behind the retention window simply resumes at the oldest kept event.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.task = new PeriodicTask(
      settings.pruneIntervalMs,
      () => this.prune(),
      (err) => this.logger.warn({ err: err.message }, 'event retention sweep failed'),
    );
  }

  onApplicationBootstrap(): void {
    if (this.settings.retentionDays > 0) this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  private async prune(): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const [{ locked }] = await m.query(`SELECT pg_try_advisory_xact_lock(hashtext('crm:event-retention')) AS locked`);
      if (!locked) return;
      const result: [unknown[], number] = await m.query(`DELETE FROM events WHERE recorded_at < now() - make_interval(days => $1)`, [
        this.settings.retentionDays,
      ]);
      const removed = result[1] ?? 0;
      if (removed) this.logger.info({ removed }, 'pruned events past the retention period');
    });
  }
}
