import { Logger } from '@crm/common';
import { DomainEvent, event, EventDraft, EventType } from '@crm/contracts';
import {
  AnchoredCheckpoint,
  DeadEvents,
  EventStreamReader,
  MESSAGING_OPTIONS,
  MessagingMetrics,
  MessagingOptions,
  NATS_CONNECTION,
  OutboxService,
  recoverReader,
  SequencedEvent,
  StreamReset,
  systemOrigin,
  withOrigin,
} from '@crm/messaging';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { Counter } from 'prom-client';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Appends every domain event from JetStream to the log exactly once and in stream order. Each batch
 * is one transaction under the writer lock that also advances the stream checkpoint, so a crash
 * resumes right after the last committed event. Several replicas may run: whichever holds the lock
 * writes, and events another replica already wrote (at or below the checkpoint, or with a known id)
 * are skipped.
 */
export const EVENT_LOG_CONSUMER = 'event-log';
const WRITER_LOCK_KEY = 'crm:event-log';
const WRITER_LOCK = `SELECT pg_advisory_xact_lock(hashtext('${WRITER_LOCK_KEY}'))`;

@Injectable()
export class EventLogWriter implements OnApplicationBootstrap, OnApplicationShutdown {
  private reader?: EventStreamReader;
  private readonly appended: Counter;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
    private readonly deadEvents: DeadEvents,
    private readonly metrics: MessagingMetrics,
    private readonly outbox: OutboxService,
  ) {
    deadEvents.register(EVENT_LOG_CONSUMER, (event) => this.appendParked(event));
    this.appended = new Counter({
      name: 'crm_event_log_appended_total',
      help: 'Events appended to the ordered log (its rate is the log append rate)',
      registers: [metrics.registry],
    });
  }

  private get logger(): Logger {
    return this.messaging.logger;
  }

  onApplicationBootstrap(): void {
    this.reader = new EventStreamReader({
      nc: this.nc,
      namespace: this.messaging.namespace,
      name: EVENT_LOG_CONSUMER,
      checkpoint: () => this.checkpoint(this.dataSource.manager),
      handle: (batch) => this.append(batch),
      park: (item, error, attempts) => this.park(item, error, attempts),
      retry: this.deadEvents.policy,
      logger: this.logger,
      // The producing services keep each event in their outbox until the log has read past it.
      announce: true,
      anchor: {
        checkpoint: () => this.anchoredCheckpoint(this.dataSource.manager),
        adopt: async (stream) => void (await this.dataSource.query(`UPDATE log_checkpoint SET stream = $1 WHERE stream IS NULL`, [stream])),
        recover: (reset, signal) => this.recover(reset, signal),
        metrics: this.metrics,
      },
    });
    this.reader.start();
    const reader = this.reader;
    this.metrics.trackLag(EVENT_LOG_CONSUMER, () => reader.lag());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.reader?.stop();
  }

  private async checkpoint(m: EntityManager): Promise<number> {
    const [{ seq }] = await m.query(`SELECT stream_seq::text AS seq FROM log_checkpoint`);
    return Number(seq);
  }

  private async anchoredCheckpoint(m: EntityManager): Promise<AnchoredCheckpoint> {
    const [{ seq, stream }] = await m.query(`SELECT stream_seq::text AS seq, stream FROM log_checkpoint`);
    return { seq: Number(seq), stream };
  }

  /**
   * After a stream reset (docs/operations.md, "Stream reset"): appends what every producing service still
   * holds in its outbox (in each one's commit order, skipping what the log has), then, in one transaction,
   * records a `stream.gap` for sequences of the old stream nothing held any more, a `system.restored` after a
   * restore, and moves the checkpoint to the new stream. Both markers also go to this service's outbox, so
   * webhook subscribers get them with the same ids. A replica that finds the checkpoint already moved by
   * another leaves it.
   */
  private recover(reset: StreamReset, signal: AbortSignal): Promise<void> {
    return recoverReader(reset, signal, {
      nc: this.nc,
      namespace: this.messaging.namespace,
      logger: this.logger,
      name: EVENT_LOG_CONSUMER,
      metrics: this.metrics,
      apply: (events) => this.appendRecovered(events),
      move: (_, anchor, gap) =>
        this.dataSource.transaction(async (m) => {
          await m.query(WRITER_LOCK);
          const now = await this.anchoredCheckpoint(m);
          if (now.seq !== reset.previous.seq || now.stream !== reset.previous.stream) return false;
          const markers: EventDraft[] = [];
          if (gap) markers.push(event(EventType.StreamGap, { reason: reset.reason, stream: reset.previous.stream ?? '', ...gap }));
          if (reset.reason === 'restored') {
            markers.push(event(EventType.SystemRestored, { stream: reset.state.created, skipped_from_seq: reset.previous.seq + 1, skipped_to_seq: anchor }));
          }
          if (markers.length) await this.insert(m, await withOrigin(systemOrigin(EVENT_LOG_CONSUMER), () => this.outbox.appendMany(m, markers)));
          await m.query(`UPDATE log_checkpoint SET stream_seq = $1, stream = $2`, [anchor, reset.state.created]);
          return true;
        }),
    });
  }

  /** Events a recovery found in the outboxes: appended in the order given, those the log lacks, under the writer lock. */
  private async appendRecovered(events: DomainEvent[]): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(WRITER_LOCK);
      const known = new Set((await m.query(`SELECT id FROM events WHERE id = ANY($1::text[])`, [events.map((e) => e.id)])).map((r: { id: string }) => r.id));
      const fresh = events.filter((e) => !known.has(e.id) && (known.add(e.id), true));
      await this.insert(m, fresh);
      this.appended.inc(fresh.length);
    });
  }

  /** One call of event_log_append (see its migration): lock, skip what the log holds, append, checkpoint. */
  async append(batch: SequencedEvent[]): Promise<void> {
    const [{ appended }]: Array<{ appended: number }> = await this.dataSource.query(
      `SELECT event_log_append($1, $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::jsonb[], $7::text[], $8::text[], $9::jsonb[]) AS appended`,
      [WRITER_LOCK_KEY, batch.map((b) => String(b.seq)), ...columnsOf(batch.map((b) => b.event))],
    );
    this.appended.inc(appended);
  }

  /** Parks an event the log could not take and moves the checkpoint past it, in one transaction. */
  private async park(item: SequencedEvent, error: unknown, attempts: number): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(WRITER_LOCK);
      await this.deadEvents.park({ consumer: EVENT_LOG_CONSUMER, event: item.event, seq: item.seq, error, attempts }, m);
      await m.query(`UPDATE log_checkpoint SET stream_seq = GREATEST(stream_seq, $1)`, [item.seq]);
    });
  }

  /** A parked event an operator retries: appended at the end of the log, unless it is there already. */
  async appendParked(event: DomainEvent): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      await m.query(WRITER_LOCK);
      const known: unknown[] = await m.query(`SELECT 1 FROM events WHERE id = $1`, [event.id]);
      if (!known.length) await this.insert(m, [event]);
    });
  }

  /** Events get positions in the order given, drawn under the writer lock. */
  private async insert(m: EntityManager, fresh: DomainEvent[]): Promise<void> {
    if (!fresh.length) return;
    const drawn: { p: string }[] = await m.query(`SELECT nextval('event_position')::text AS p FROM generate_series(1, $1)`, [fresh.length]);
    const positions = drawn.map((r) => BigInt(r.p)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    await m.query(
      `INSERT INTO events (position, id, type, occurred_at, actor, via, request_id, data)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[], $5::jsonb[], $6::text[], $7::text[], $8::jsonb[])`,
      [positions.map(String), ...columnsOf(fresh)],
    );
  }
}

/** The log's columns of each event, as the arrays the statements unnest. */
function columnsOf(events: DomainEvent[]): unknown[][] {
  return [
    events.map((e) => e.id),
    events.map((e) => e.type),
    events.map((e) => e.occurred_at),
    // An event published before producers stamped an origin (still in the stream, or parked) has none.
    events.map((e) => (e.actor ? JSON.stringify(e.actor) : null)),
    events.map((e) => e.via ?? null),
    events.map((e) => e.request_id ?? null),
    events.map((e) => JSON.stringify(e.data ?? {})),
  ];
}
