import { Logger } from '@crm/common';
import { DomainEvent, EventConsumer } from '@crm/contracts';
import { DurableEventConsumer, MESSAGING_OPTIONS, MessagingOptions, NATS_CONNECTION } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { WEBHOOKS_SETTINGS, WebhooksSettings } from '../config/webhooks.settings';
import { DispatchSignal } from '../deliveries/dispatch-signal';

const CONSUMER_LOCK = 'crm:webhooks:event-intake';
const INSERT_LOCK = 'crm:webhooks:event-insert';

/**
 * Copies every domain event from JetStream into webhook_events, numbering them in consumption order.
 * Only one replica consumes at a time (it holds a session advisory lock on a dedicated connection), so
 * positions follow the stream's order; another replica takes over when that connection drops.
 */
@Injectable()
export class EventIntakeService implements OnApplicationBootstrap, OnApplicationShutdown {
  private lockClient?: Client;
  private consumer?: DurableEventConsumer;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private attempting = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly signal: DispatchSignal,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
    @Inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.tryLead();
    this.timer = setInterval(() => void this.tryLead(), Math.max(this.settings.dispatchIntervalMs, 1000));
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.consumer?.stop();
    await this.lockClient?.end().catch(() => undefined);
  }

  private async tryLead(): Promise<void> {
    if (this.stopped || this.attempting || this.consumer) return;
    this.attempting = true;
    const client = new Client({ connectionString: this.messaging.databaseUrl });
    try {
      await client.connect();
      const [{ locked }] = (await client.query(`SELECT pg_try_advisory_lock(hashtext($1)) AS locked`, [CONSUMER_LOCK])).rows;
      if (!locked || this.stopped) {
        await client.end();
        return;
      }
      client.on('error', (err) => {
        this.logger.warn({ err: err.message }, 'lost the event intake lock; stopping intake until it is regained');
        void this.resign();
      });
      this.lockClient = client;
      this.consumer = new DurableEventConsumer({
        nc: this.nc,
        namespace: this.messaging.namespace,
        durable: EventConsumer.Webhooks,
        logger: this.logger,
        handle: (events) => this.store(events),
      });
      this.consumer.start();
      this.logger.info('this replica now copies events for webhook delivery');
    } catch (err) {
      await client.end().catch(() => undefined);
      this.logger.warn({ err: (err as Error).message }, 'could not try the event intake lock');
    } finally {
      this.attempting = false;
    }
  }

  private async resign(): Promise<void> {
    const consumer = this.consumer;
    const client = this.lockClient;
    this.consumer = undefined;
    this.lockClient = undefined;
    await consumer?.stop();
    await client?.end().catch(() => undefined);
  }

  /** Idempotent on event id: a batch redelivered after a crash adds nothing. */
  async store(events: DomainEvent[]): Promise<void> {
    if (!events.length) return;
    await this.dataSource.transaction(async (m) => {
      // Serialises inserts so positions become visible in increasing order: a dispatcher reading
      // `position > bookmark` can never skip a row that commits later with a smaller position.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [INSERT_LOCK]);
      for (const event of events) {
        const body = JSON.stringify({ id: event.id, type: event.type, occurred_at: event.occurred_at, data: event.data });
        await m.query(`INSERT INTO webhook_events (id, type, body) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, [event.id, event.type, body]);
      }
    });
    this.signal.kick();
  }
}
