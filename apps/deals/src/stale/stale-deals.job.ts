import { Logger } from '@crm/common';
import { event, EventType } from '@crm/contracts';
import { OutboxService, systemOrigin, withOrigin } from '@crm/messaging';
import { LOGGER, PeriodicJob } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';

const BATCH = 500;
const DAY_MS = 86_400_000;

/**
 * Emits trigger.deal.stale once per deal when its inactivity (last_activity_at, else created_at)
 * crosses the threshold. The deal is marked in the same transaction as the outbox row, so it is
 * reported once; new activity clears the mark (see ContactLinksService.recordActivity). A
 * transaction-scoped advisory lock lets one replica sweep at a time.
 */
@Injectable()
export class StaleDealsJob extends PeriodicJob {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, { intervalMs: settings.staleCheckIntervalMs, failure: 'stale-deal sweep failed; retrying next interval', firstRun: 'after-interval' });
  }

  protected async run(): Promise<void> {
    await this.sweep();
  }

  /** Reports every deal that crossed the threshold since the last sweep; returns how many. */
  sweep(): Promise<number> {
    // The reports are the system's own doing: their events name this job as the actor.
    return withOrigin(systemOrigin('stale_deals'), () => this.sweepAll());
  }

  private async sweepAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const reported = await this.dataSource.transaction(async (m) => {
        const [{ locked }] = (await m.query(`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.stale_sweep')) AS locked`)) as Array<{
          locked: boolean;
        }>;
        if (!locked) return -1;
        const rows = (await m.query(
          `SELECT id, COALESCE(last_activity_at, created_at) AS inactive_since FROM deals
            WHERE stale_notified_at IS NULL AND status IN ('open', 'stalled')
              AND COALESCE(last_activity_at, created_at) <= clock_timestamp() - make_interval(secs => $1::double precision / 1000)
            ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
          [this.settings.staleAfterMs],
        )) as Array<{ id: string; inactive_since: Date }>;
        if (!rows.length) return 0;
        await m.query(`UPDATE deals SET stale_notified_at = clock_timestamp() WHERE id = ANY($1::text[])`, [rows.map((r) => r.id)]);
        await this.outbox.appendMany(
          m,
          rows.map((row) =>
            event(EventType.TriggerDealStale, {
              deal_id: row.id,
              last_activity_at: row.inactive_since.toISOString(),
              threshold_days: this.settings.staleAfterMs / DAY_MS,
            }),
          ),
        );
        return rows.length;
      });
      if (reported <= 0) break;
      total += reported;
      if (reported < BATCH || this.task.stopping) break;
    }
    return total;
  }
}
