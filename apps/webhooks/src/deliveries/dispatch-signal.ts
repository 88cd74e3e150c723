import { Logger } from '@crm/common';
import { MESSAGING_OPTIONS, MessagingOptions, notifyChannel, notifySql, PgNotifications } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { DataSource } from 'typeorm';

const CHANNEL = 'webhooks_dispatch';

/**
 * Wakes the dispatchers when there may be new work (new events, a subscription resumed or replayed):
 * this replica's at once, the others through a PostgreSQL notification on the service's schema. Each
 * replica ignores its own notifications, since it was woken directly before they went out.
 */
@Injectable()
export class DispatchSignal implements OnApplicationBootstrap, OnApplicationShutdown {
  private listener?: () => void;
  private readonly self = randomUUID();
  private readonly notifications: PgNotifications;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(MESSAGING_OPTIONS) messaging: MessagingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.notifications = new PgNotifications({
      databaseUrl: messaging.databaseUrl,
      channel: notifyChannel(CHANNEL, messaging.schema),
      logger,
      notified: (from) => from !== this.self && this.kick(),
      // What other replicas announced while this one did not listen is found by looking once.
      listening: () => this.kick(),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.notifications.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.notifications.stop();
  }

  onKick(listener: () => void): void {
    this.listener = listener;
  }

  /** Wakes this replica's dispatcher only. */
  kick(): void {
    this.listener?.();
  }

  /** SQL for a statement to notify the other replicas in its own round trip (sent when its transaction commits). */
  get notifyOthersSql(): string {
    return notifySql(CHANNEL, `'${this.self}'`);
  }

  /** Wakes this replica's dispatcher and the other replicas'. */
  announce(): void {
    this.kick();
    this.dataSource.query(`SELECT ${this.notifyOthersSql}`).catch((err: Error) => this.logger.warn({ err: err.message }, 'could not wake the other replicas'));
  }
}
