import { Logger } from '@crm/common';
import { DomainEvent, DURABLE_CONSUMERS, eventStreamName, outboxRowsSubject, streamCheckpointSubject } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Msg, NatsConnection, NatsError, Subscription } from 'nats';
import { DataSource } from 'typeorm';
import { MessagingMetrics } from '../messaging.metrics';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { decodeJson, encodeJson, NATS_CONNECTION } from '../nats';
import { OutboxRelay } from './outbox.relay';

/** The readers that must have passed an outbox row before it is deleted: the event log and the webhook intake. */
export const STREAM_READERS = ['event-log', 'webhook-intake'] as const;

/** How far a reader has read the stream: the stream's identity and the last sequence it committed. */
export interface ReaderCheckpoint {
  consumer: string;
  stream: string;
  seq: number;
}

/** A page of an outbox asked for on `outboxRowsSubject`. */
export interface OutboxPageRequest {
  /** The outbox seq after which the page starts ("0" for the first). */
  after: string;
  limit: number;
}

export interface OutboxPageRow {
  seq: string;
  event: DomainEvent;
  /** Where the relay had it stored, if it had: the stream's identity and the sequence. */
  stream: string | null;
  stream_seq: number | null;
}

export interface OutboxPage {
  rows: OutboxPageRow[];
  more: boolean;
}

/** JetStream's error code for a consumer that does not exist. */
const CONSUMER_NOT_FOUND = 10014;

/** How often one process deletes what the readers passed, at most. */
const PRUNE_EVERY_MS = 1000;

/**
 * The producing service's side of "nothing lost when the stream is" (docs/operations.md): it listens to the
 * readers' checkpoints and deletes the outbox rows both have read past, and it answers a reader recovering
 * from a stream reset with its outbox, a page at a time, in commit order. Rows marked as published to a
 * stream the readers no longer read are published again once both read the new one (for them a duplicate,
 * skipped by id; for the outbox the way to a checkpoint that lets the row go).
 */
@Injectable()
export class OutboxLedger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly subscriptions: Subscription[] = [];
  private readonly passed = new Map<string, ReaderCheckpoint>();
  private pruning?: Promise<void>;
  private lastPrune = 0;
  private timer?: NodeJS.Timeout;
  /** The stream whose older rows were already sent again. */
  private republishedFor?: string;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
    private readonly relay: OutboxRelay,
    private readonly metrics: MessagingMetrics,
  ) {}

  private get logger(): Logger {
    return this.options.logger;
  }

  onApplicationBootstrap(): void {
    const { namespace, service } = this.options;
    // Every replica hears every checkpoint (each keeps both readers' latest); one replica answers each page.
    this.subscriptions.push(
      this.nc.subscribe(streamCheckpointSubject(namespace), {
        callback: (err, msg) => {
          if (err) return;
          try {
            this.heard(decodeJson<ReaderCheckpoint>(msg.data));
          } catch {
            // Not a checkpoint: ignored.
          }
        },
      }),
      this.nc.subscribe(outboxRowsSubject(namespace, service), {
        queue: `${namespace}.${service}.outbox`,
        callback: (err, msg) => {
          if (!err) void this.answer(msg);
        },
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    for (const s of this.subscriptions) s.unsubscribe();
    await this.pruning?.catch(() => undefined);
  }

  /** Records a reader's checkpoint and prunes soon (at most once a second). */
  heard(checkpoint: ReaderCheckpoint): void {
    if (!(STREAM_READERS as readonly string[]).includes(checkpoint.consumer) || typeof checkpoint.seq !== 'number') return;
    this.passed.set(checkpoint.consumer, checkpoint);
    if (this.timer || this.pruning) return;
    const wait = Math.max(0, this.lastPrune + PRUNE_EVERY_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pruning = this.prune()
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not delete outbox rows the readers passed; will retry'))
        .finally(() => {
          this.pruning = undefined;
          this.lastPrune = Date.now();
        });
    }, wait);
  }

  /**
   * Deletes the rows both readers and every durable consumer passed on the stream the readers read; sends
   * again, once, what went to an older stream.
   */
  async prune(): Promise<void> {
    const all = STREAM_READERS.map((c) => this.passed.get(c));
    if (all.some((c) => !c)) return;
    const [first, ...rest] = all as ReaderCheckpoint[];
    if (rest.some((c) => c.stream !== first.stream)) return;
    const through = Math.min(...all.map((c) => c!.seq), await this.durableConsumersThrough(first.stream));
    await this.dataSource.query(`DELETE FROM outbox WHERE published_stream = $1 AND published_seq <= $2`, [first.stream, through]);
    this.metrics.outboxPrunes.inc();
    if (this.republishedFor === first.stream) return;
    // Both readers have recovered onto this stream, so they hold what went to the one before: sending those
    // rows again is what lets them go. Only once the relay publishes to the same stream, or the rows would
    // just be marked for the old one again.
    const current = this.relay.streamIdentity === first.stream ? first.stream : await this.relay.readIdentity().catch(() => undefined);
    if (current !== first.stream) return;
    const moved: unknown[] = await this.dataSource.query(
      `UPDATE outbox SET published_stream = NULL, published_seq = NULL WHERE published_seq IS NOT NULL AND published_stream <> $1 RETURNING seq`,
      [first.stream],
    );
    this.republishedFor = first.stream;
    if (moved.length) {
      this.logger.warn({ rows: moved.length }, 'publishing again the outbox rows that went to a stream the readers no longer read');
      this.relay.kick();
    }
  }

  /**
   * The last sequence of stream `identity` that every durable consumer on it has handled: the services' own
   * consumers (deal activity, deal links) keep their place in JetStream, and a row they have not handled
   * must stay for them to recover from if the stream goes (docs/operations.md, "Stream reset"). A consumer
   * with nothing pending has handled all the stream held when it was asked; one behind, up to its ack floor.
   * Another stream than `identity` (a reset under way) lets nothing go.
   */
  private async durableConsumersThrough(identity: string): Promise<number> {
    const jsm = await this.nc.jetstreamManager();
    const stream = eventStreamName(this.options.namespace);
    const info = await jsm.streams.info(stream);
    if (info.created !== identity) return 0;
    let through = info.state.last_seq;
    // Asked by name, which is all a process's NATS user may ask (libs/contracts/src/nats-users.ts).
    for (const durable of DURABLE_CONSUMERS) {
      const consumer = await jsm.consumers.info(stream, durable).catch((err: NatsError) => {
        if (err.api_error?.err_code === CONSUMER_NOT_FOUND) return undefined; // its service has not started on this stream
        throw err;
      });
      if (consumer && (consumer.num_pending > 0 || consumer.num_ack_pending > 0)) through = Math.min(through, consumer.ack_floor.stream_seq);
    }
    return through;
  }

  /**
   * One page of the outbox after `after`, in seq order, read under a SHARE lock on the table: it waits for the
   * transactions writing to the outbox to end (a few milliseconds) and holds new ones back while the page is
   * read, so no row can commit later with a seq below the page's last. A reader paging through therefore sees
   * every row of a resource that a later row of it depends on. Only during a reader's recovery.
   */
  private async answer(msg: Msg): Promise<void> {
    try {
      const request = decodeJson<OutboxPageRequest>(msg.data);
      const after = String(BigInt(request.after));
      const limit = Math.min(Math.max(1, Math.floor(request.limit)), 1000);
      const budget = Math.floor((this.nc.info?.max_payload ?? 1024 * 1024) / 2);
      const rows: Array<{ seq: string; payload: DomainEvent; published_stream: string | null; published_seq: string | null }> =
        await this.dataSource.transaction(async (m) => {
          await m.query(`SET LOCAL lock_timeout = '5s'`);
          await m.query(`LOCK TABLE outbox IN SHARE MODE`);
          // outbox.seq, not the output column seq (its text), which would sort '100' before '99'.
          return m.query(`SELECT seq::text, payload, published_stream, published_seq::text FROM outbox WHERE seq > $1 ORDER BY outbox.seq LIMIT $2`, [
            after,
            limit + 1,
          ]);
        });
      const page: OutboxPage = { rows: [], more: rows.length > limit };
      let size = 0;
      for (const row of rows.slice(0, limit)) {
        size += JSON.stringify(row.payload).length + 200;
        if (page.rows.length && size > budget) {
          page.more = true;
          break;
        }
        page.rows.push({
          seq: row.seq,
          event: row.payload,
          stream: row.published_stream,
          stream_seq: row.published_seq === null ? null : Number(row.published_seq),
        });
      }
      msg.respond(encodeJson(page));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not answer a page of the outbox');
      msg.respond(encodeJson({ error: (err as Error).message }));
    }
  }
}
