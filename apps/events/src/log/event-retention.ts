import { Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import { LOGGER, PeriodicJob } from '@crm/runtime';
import { DataSource } from 'typeorm';
import { EVENTS_SETTINGS, EventsSettings } from './events.settings';

/**
 * Prunes events older than EVENTS_RETENTION_DAYS (off by default: the log is kept for ever). Cursors
 * stay valid after a prune; a poller behind the retention window simply resumes at the oldest kept event.
 */
@Injectable()
export class EventRetention extends PeriodicJob {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, { intervalMs: settings.pruneIntervalMs, failure: 'event retention sweep failed', enabled: settings.retentionDays > 0 });
  }

  protected async run(): Promise<void> {
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
