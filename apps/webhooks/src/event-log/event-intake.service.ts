import { Logger, sessionConnection } from '@crm/common';
import { DomainEvent } from '@crm/contracts';
import {
  AnchoredCheckpoint,
  DeadEvents,
  EventStreamReader,
  MESSAGING_OPTIONS,
  MessagingMetrics,
  MessagingOptions,
  NATS_CONNECTION,
  recoverReader,
  SequencedEvent,
  streamLag,
  StreamReset,
} from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { DispatchSignal } from '../deliveries/dispatch-signal';
import { webhookBody } from '../deliveries/webhook-body';

const CONSUMER_LOCK = 'crm:webhooks:event-intake';
const INSERT_LOCK = 'crm:webhooks:event-insert';
export const INTAKE_CONSUMER = 'webhook-intake';
/** After the lock's connection failed (the database unreachable), the next attempt. */
const RETRY_MS = 1_000;

type Attempt = 'led' | 'taken' | 'failed';

/**
 * Copies every domain event from JetStream into webhook_events, numbering them in stream order.
 * Only one replica reads at a time (it holds a session advisory lock on a dedicated connection);
 * the others wait for that lock on a connection of their own, doing nothing, and the first in line
 * takes over the moment the leader's connection drops. Reading resumes from the stream sequence
 * committed with the last copied batch, so after a crash or a takeover nothing is skipped, copied
 * twice, or copied out of order.
 */
@Injectable()
export class EventIntakeService implements OnApplicationBootstrap, OnApplicationShutdown {
  private lockClient?: Client;
  private consumer?: EventStreamReader;
  /** The connection waiting for the lock, while this replica follows. */
  private candidate?: Client;
  private retry?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly signal: DispatchSignal,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly deadEvents: DeadEvents,
    private readonly metrics: MessagingMetrics,
  ) {
    deadEvents.register(INTAKE_CONSUMER, (event) => this.storeParked(event));
    // Whichever replica holds the intake, the checkpoint is shared: every replica reports the same lag.
    metrics.trackLag(INTAKE_CONSUMER, async () => streamLag(this.nc, this.messaging.namespace, await this.checkpoint()));
  }

  async onApplicationBootstrap(): Promise<void> {
    const attempt = await this.lead(false);
    if (attempt !== 'led') this.follow(attempt === 'taken' ? 0 : RETRY_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.candidate?.end().catch(() => undefined);
    await this.consumer?.stop();
    await this.lockClient?.end().catch(() => undefined);
  }

  /** Waits for the lock (from `delayMs` on) and leads once it is granted; tries again after a failure. */
  private follow(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.lead(true).then((attempt) => attempt !== 'led' && this.follow(RETRY_MS));
    }, delayMs);
  }

  /** Takes the lock (waiting for it when `wait`, else only if free) and starts reading. */
  private async lead(wait: boolean): Promise<Attempt> {
    if (this.stopped || this.consumer) return 'led';
    // A leader on a dead node holds the lock until the server notices, in about a minute (sessionConnection).
    const client = new Client(sessionConnection(this.messaging.databaseUrl));
    // An error while waiting fails the pending query (handled below); while leading, the lock is gone.
    client.on('error', (err) => {
      if (this.lockClient !== client) return;
      this.logger.warn({ err: err.message }, 'lost the event intake lock; stopping intake until it is regained');
      void this.resign().then(() => this.follow(RETRY_MS));
    });
    this.candidate = client;
    try {
      await client.connect();
      const locked = wait
        ? (await client.query(`SELECT pg_advisory_lock(hashtext($1))`, [CONSUMER_LOCK]), true)
        : (await client.query(`SELECT pg_try_advisory_lock(hashtext($1)) AS locked`, [CONSUMER_LOCK])).rows[0].locked;
      if (!locked || this.stopped) {
        await client.end();
        return this.stopped ? 'led' : 'taken';
      }
      this.lockClient = client;
      this.consumer = new EventStreamReader({
        nc: this.nc,
        namespace: this.messaging.namespace,
        name: INTAKE_CONSUMER,
        logger: this.logger,
        checkpoint: () => this.checkpoint(),
        handle: (batch) => this.store(batch),
        park: (item, error, attempts) => this.park(item, error, attempts),
        retry: this.deadEvents.policy,
        // Every event waits for the intake before it can be delivered, so none waits for company.
        lingerMs: 0,
        // The producing services keep each event in their outbox until the intake has read past it.
        announce: true,
        anchor: {
          checkpoint: () => this.anchoredCheckpoint(),
          adopt: async (stream) => void (await this.dataSource.query(`UPDATE intake_checkpoint SET stream = $1 WHERE stream IS NULL`, [stream])),
          recover: (reset, signal) => this.recover(reset, signal),
          metrics: this.metrics,
        },
      });
      this.consumer.start();
      this.logger.info('this replica now copies events for webhook delivery');
      return 'led';
    } catch (err) {
      await client.end().catch(() => undefined);
      if (this.stopped) return 'led';
      this.logger.warn({ err: (err as Error).message }, 'could not try the event intake lock');
      return 'failed';
    } finally {
      if (this.candidate === client) this.candidate = undefined;
    }
  }

  private async checkpoint(): Promise<number> {
    return Number((await this.dataSource.query(`SELECT stream_seq::text AS seq FROM intake_checkpoint`))[0].seq);
  }

  private async anchoredCheckpoint(m: { query: DataSource['query'] } = this.dataSource): Promise<AnchoredCheckpoint> {
    const [{ seq, stream }] = await m.query(`SELECT stream_seq::text AS seq, stream FROM intake_checkpoint`);
    return { seq: Number(seq), stream };
  }

  /**
   * After a stream reset (docs/operations.md, "Stream reset"): copies what every producing service still
   * holds in its outbox (each one's in commit order, skipping ids already copied), then moves the checkpoint
   * to the new stream. Events lost for good are counted and logged; the event log's `stream.gap` marker
   * reaches subscribers through the stream like any event.
   */
  private recover(reset: StreamReset, signal: AbortSignal): Promise<void> {
    return recoverReader(reset, signal, {
      nc: this.nc,
      namespace: this.messaging.namespace,
      logger: this.logger,
      name: INTAKE_CONSUMER,
      metrics: this.metrics,
      apply: (events) => this.storeRecovered(events),
      move: (_, anchor) =>
        this.dataSource.transaction(async (m) => {
          await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [INSERT_LOCK]);
          const now = await this.anchoredCheckpoint(m);
          if (now.seq !== reset.previous.seq || now.stream !== reset.previous.stream) return false;
          await m.query(`UPDATE intake_checkpoint SET stream_seq = $1, stream = $2`, [anchor, reset.state.created]);
          return true;
        }),
    });
  }

  /** Events a recovery found in the outboxes: copied in the order given unless already there, and announced to the dispatchers. */
  private async storeRecovered(events: DomainEvent[]): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [INSERT_LOCK]);
      await this.insert(m, events);
    });
    this.signal.announce();
  }

  private async resign(): Promise<void> {
    const consumer = this.consumer;
    const client = this.lockClient;
    this.consumer = undefined;
    this.lockClient = undefined;
    await consumer?.stop();
    await client?.end().catch(() => undefined);
  }

  /**
   * Skips what the checkpoint says is copied already, and is idempotent on event id besides: one call to
   * webhook_take_in, which holds the insert lock so positions become visible in increasing order (a
   * dispatcher reading `position > bookmark` can never skip a row that commits later with a smaller one).
   */
  async store(batch: SequencedEvent[]): Promise<void> {
    if (!batch.length) return;
    const events = batch.map((b) => ({ ...b.event, traceparent: b.traceparent }));
    // The other replicas' dispatchers are woken in the same round trip when there is something to claim.
    const [{ claimable }]: { claimable: boolean }[] = await this.dataSource.query(
      `SELECT claimable, CASE WHEN claimable THEN ${this.signal.notifyOthersSql} END FROM (SELECT webhook_take_in($1, $2, $3, $4, $5, $6) AS claimable) t`,
      [INSERT_LOCK, batch.map((b) => b.seq), ...this.columns(events)],
    );
    if (claimable) this.signal.kick();
  }

  /** Parks an event intake could not copy and moves the checkpoint past it, in one transaction. */
  private async park(item: SequencedEvent, error: unknown, attempts: number): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [INSERT_LOCK]);
      await this.deadEvents.park({ consumer: INTAKE_CONSUMER, event: item.event, seq: item.seq, error, attempts }, m);
      await m.query(`UPDATE intake_checkpoint SET stream_seq = GREATEST(stream_seq, $1)`, [item.seq]);
    });
  }

  /** A parked event an operator retries: copied after everything copied so far, unless it is there already. */
  async storeParked(event: DomainEvent): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [INSERT_LOCK]);
      await this.insert(m, [event]);
    });
    this.signal.announce();
  }

  /** One INSERT for the batch; positions follow the order given. */
  private async insert(m: EntityManager, events: Array<DomainEvent & { traceparent?: string }>): Promise<void> {
    if (!events.length) return;
    await m.query(
      `INSERT INTO webhook_events (id, type, body, trace_context)
       SELECT e.id, e.type, e.body, e.trace FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(id, type, body, trace, n)
       ORDER BY e.n ON CONFLICT (id) DO NOTHING`,
      this.columns(events),
    );
  }

  /** The events as the columns webhook_events stores: ids, types, webhook bodies, trace contexts. */
  private columns(events: Array<DomainEvent & { traceparent?: string }>): [string[], string[], string[], Array<string | null>] {
    return [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(webhookBody(e))), events.map((e) => e.traceparent ?? null)];
  }
}
