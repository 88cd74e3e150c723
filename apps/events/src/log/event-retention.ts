import { Logger } from '@crm/common';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { LOGGER } from '@crm/runtime';
import { DataSource } from 'typeorm';
import { EVENTS_SETTINGS, EventsSettings } from './events.settings';

/**
 * Prunes events older than EVENTS_RETENTION_DAYS (off by default: the log is kept for ever). Cursors
 * stay valid after a prune; a poller behind the retention window simply resumes at the oldest kept event.
 */
@Injectable()
export class EventRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.retentionDays === 0) return;
    this.timer = setInterval(() => void this.prune(), this.settings.pruneIntervalMs);
    void this.prune();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async prune(): Promise<number> {
    try {
      return await this.dataSource.transaction(async (m) => {
        const [{ locked }] = await m.query(`SELECT pg_try_advisory_xact_lock(hashtext('crm:event-retention')) AS locked`);
        if (!locked) return 0;
        const result: [unknown[], number] = await m.query(`DELETE FROM events WHERE recorded_at < now() - make_interval(days => $1)`, [
          this.settings.retentionDays,
        ]);
        const removed = result[1] ?? 0;
        if (removed) this.logger.info({ removed }, 'pruned events past the retention period');
        return removed;
      });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'event retention sweep failed');
      return 0;
    }
  }
}
