import { DomainEvent } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { MessagingMetrics } from '../messaging.metrics';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { DEFAULT_RETRY_POLICY, RetryPolicy } from './bounded-handling';
import { notifyChannel, PgNotifications } from '../pg-notifications';
import { claimRetries, countDeadEvents, errorText, parkEvent, ParkRequest, Queryable, releaseRetried, RETRY_CHANNEL, retryFailed } from './dead-event.store';

/** Handles one parked event again, outside the stream order, idempotently. */
export type Replay = (event: DomainEvent) => Promise<void>;

/**
 * A service's dead events: consumers park what they gave up on here, `crm_dead_events` counts them per
 * consumer for /metrics, /health shows the count, and events an operator asked to retry are replayed
 * through the consumer's own handling, by whichever replica claims them first. A retry request wakes
 * the replicas with a PostgreSQL notification; the slow look every `deadEventPollMs` is only for a
 * request whose notification was lost.
 */
@Injectable()
export class DeadEvents implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly policy: RetryPolicy;
  private readonly replays = new Map<string, Replay>();
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  private notifications?: PgNotifications;
  private again = false;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
    @Optional() metrics?: MessagingMetrics,
  ) {
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.eventRetry };
    const counts = () => this.counts();
    new Gauge({
      name: 'crm_dead_events',
      help: 'Events a consumer gave up on after its attempts, parked for an operator, by consumer',
      labelNames: ['consumer'],
      registers: metrics ? [metrics.registry] : [],
      async collect() {
        this.reset();
        // A process without consumers (the gateway) has no dead_events table: nothing to report.
        for (const [consumer, count] of Object.entries(await counts().catch(() => ({})))) this.set({ consumer }, count);
      },
    });
  }

  /** Declares a consumer of this service and how a parked event of it is handled again. */
  register(consumer: string, replay: Replay): void {
    this.replays.set(consumer, replay);
  }

  get consumers(): string[] {
    return [...this.replays.keys()];
  }

  /** Parks an event; pass the transaction's manager to park it together with other writes. */
  async park(request: Omit<ParkRequest, 'error'> & { error: unknown }, db: Queryable = this.dataSource): Promise<void> {
    const error = errorText(request.error);
    await parkEvent(db, { ...request, error });
    this.options.logger.error(
      { consumer: request.consumer, event_id: request.event.id, event_type: request.event.type, attempts: request.attempts, err: error },
      'parked an event the consumer could not handle; it goes on with the next',
    );
  }

  /** Parked events per consumer of this service (consumers with none are listed with 0). */
  async counts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = Object.fromEntries(this.consumers.map((c) => [c, 0]));
    return { ...counts, ...(await countDeadEvents(this.dataSource)) };
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.replays.size) return;
    this.notifications = new PgNotifications({
      databaseUrl: this.options.databaseUrl,
      channel: notifyChannel(RETRY_CHANNEL, this.options.schema),
      logger: this.options.logger,
      notified: () => this.replaySoon(),
      // A request made while no connection listened: looked for once listening.
      listening: () => this.replaySoon(),
    });
    await this.notifications.start();
    this.timer = setInterval(() => this.replaySoon(), this.options.deadEventPollMs ?? 60_000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.notifications?.stop();
    await this.pass;
  }

  /** One pass over the retry requests, unless one is under way (it runs again after, for a request it may have missed). */
  private replaySoon(): void {
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.replayRequested()
      .then(() => undefined)
      .catch((err) => this.options.logger.warn({ err: (err as Error).message }, 'could not replay parked events'))
      .finally(() => {
        this.pass = undefined;
        if (this.again) {
          this.again = false;
          this.replaySoon();
        }
      });
  }

  /** Replays the events an operator asked to retry: a success removes the row, a failure parks it again. Answers how many succeeded. */
  async replayRequested(): Promise<number> {
    if (!this.replays.size) return 0;
    return this.dataSource.transaction(async (m) => {
      let replayed = 0;
      for (const dead of await claimRetries(m, this.consumers)) {
        try {
          await this.replays.get(dead.consumer)!(dead.event);
          await releaseRetried(m, dead.id);
          replayed++;
          this.options.logger.info({ consumer: dead.consumer, event_id: dead.event.id }, 'replayed a parked event');
        } catch (err) {
          await retryFailed(m, dead.id, errorText(err));
          this.options.logger.warn({ consumer: dead.consumer, event_id: dead.event.id, err: errorText(err) }, 'a parked event failed again');
        }
      }
      return replayed;
    });
  }
}
