import { contextFrom, inSpan, Logger, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { headers as natsHeaders, JetStreamClient, MsgHdrs, NatsConnection, PubAck } from 'nats';
import { Client, PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { DUPLICATE_WINDOW_MS, ensureEventStream, streamIdentity } from '../jetstream';
import { MessagingMetrics } from '../messaging.metrics';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { connectNatsOnce, encodeJson, NATS_CONNECTION } from '../nats';
import { outboxChannel } from './outbox.service';

/** Rows a window reads and publishes. */
const WINDOW = 1000;
const PUBLISH_TIMEOUT_MS = 5000;
/** How old the stream identity the relay records may get before it is read again. */
const IDENTITY_RECHECK_MS = 2000;

interface OutboxRow {
  seq: string;
  event_id: string;
  payload: DomainEvent;
  trace_context: string | null;
}

const tracer = tracerFor('outbox');

/**
 * Moves committed outbox rows to JetStream, in outbox order, a window at a time without waiting for each
 * acknowledgement, over a NATS connection of its own that never reconnects; it deletes a row only after
 * JetStream acknowledged it. The event id is the JetStream message id, so a publish repeated after a crash
 * between ack and delete, or after a timeout that hid a success, is dropped by the stream's duplicate
 * window (and by the log's unique id after it). A service's outbox is one lane: one replica at a time
 * drains it (advisory lock), in order (docs/events.md, "The relay").
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private rerun = false;
  private stopped = false;
  private streamReady = false;
  private failing = false;
  /** The relay's own connection and its JetStream client; replaced once it has closed. */
  private publisher?: { nc: NatsConnection; js: JetStreamClient };
  /** Whether the next window sends its first row alone and waits for it: after a failure and on a new connection. */
  private probe = true;
  /**
   * Rows a failed window left unacknowledged while a later event of their resource was acknowledged, by
   * event id, with when they were first sent: the ack of their next publish tells whether they had been
   * stored (in order) or not (out of order).
   */
  private readonly doubtful = new Map<string, { type: string; sentAt: number }>();
  /** The stream every publish names: worked out once, not once a row. */
  private readonly streamName: string;
  /**
   * The identity (creation time) of the stream the relay publishes to, recorded with each row it marks, and
   * when it was last read: a stream deleted and made again has a new one (docs/operations.md, "Stream reset").
   */
  private identity?: { created: string; checkedAt: number };
  /** The highest sequence a fresh (not duplicate) acknowledgement named: a lower one means a new stream. */
  private highestSeq = 0;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
    private readonly metrics: MessagingMetrics,
  ) {
    this.streamName = eventStreamName(options.namespace);
  }

  private get logger(): Logger {
    return this.options.logger;
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.kick(), this.options.outboxPollMs ?? 1000);
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    await this.publisher?.nc.close().catch(() => undefined);
  }

  /** Starts a drain now, or right after the one under way. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.rerun && !this.stopped) {
        this.rerun = false;
        this.kick();
      }
    });
  }

  /** The relay's publishing connection: one with reconnecting off, so that all it sent went over one socket. */
  protected connect(): Promise<NatsConnection> {
    return connectNatsOnce(this.options.natsUrl, `crm-${this.options.service}-relay`, this.options.natsUser);
  }

  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.options.databaseUrl });
    client.on('notification', () => this.kick());
    client.on('error', (err) => {
      // The poll timer keeps events moving; reconnect the listener in the background.
      this.logger.warn({ err: err.message }, 'outbox listener lost its connection; relying on polling');
      this.listener = undefined;
      setTimeout(() => !this.stopped && this.listen().catch(() => undefined), 1000);
    });
    await client.connect();
    await client.query(`LISTEN "${outboxChannel(this.options.schema)}"`);
    this.listener = client;
  }

  private async drain(): Promise<void> {
    try {
      if (!this.streamReady) {
        await ensureEventStream(this.nc, this.options.namespace, {
          maxAgeSeconds: this.options.streamMaxAgeSeconds,
          maxBytes: this.options.streamMaxBytes,
          replicas: this.options.streamReplicas,
        });
        this.streamReady = true;
      }
      if (!this.identity || Date.now() - this.identity.checkedAt > IDENTITY_RECHECK_MS) await this.readIdentity();
      while (!this.stopped && (await this.publishWindow()) === WINDOW);
      if (this.failing) this.logger.info('outbox relay is publishing again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.logger.warn({ err: (err as Error).message }, 'outbox relay cannot publish yet; will retry');
      this.failing = true;
      // The stream may be gone: the next drain makes it again if so.
      this.streamReady = false;
    }
  }

  /** The stream's identity as the relay records it with each row: read again after a failure and every few seconds. */
  get streamIdentity(): string | undefined {
    return this.identity?.created;
  }

  /** Reads the stream's identity now (a reader named another one, or acknowledgements went backwards). */
  async readIdentity(): Promise<string> {
    const created = await streamIdentity(this.nc, this.options.namespace);
    if (this.identity && this.identity.created !== created) {
      this.logger.warn({ stream: this.streamName, was: this.identity.created, now: created }, 'the event stream was made again; publishing to the new one');
      this.highestSeq = 0;
    }
    this.identity = { created, checkedAt: Date.now() };
    return created;
  }

  private async jetstream(): Promise<JetStreamClient> {
    if (!this.publisher || this.publisher.nc.isClosed()) {
      this.publisher = undefined;
      const nc = await this.connect();
      this.publisher = { nc, js: nc.jetstream() };
      this.probe = true;
    }
    return this.publisher.js;
  }

  /**
   * One window in two round trips to PostgreSQL: the transaction's start, the lock and the read as one
   * simple query, and the delete with the commit as another. The relay runs after every committed
   * change, so its statements are a share of each write's cost; six round trips were. Between the two,
   * the window's events go to JetStream without waiting for each acknowledgement (see `send`).
   */
  private async publishWindow(): Promise<number> {
    const js = await this.jetstream();
    const runner = this.dataSource.createQueryRunner();
    const connection = (await runner.connect()) as PoolClient;
    // The connection stays checked out while events are published to NATS, so no pool listens for its
    // errors then: a database that goes away in that window would be an unhandled 'error' event. The
    // window then fails at its next statement and the relay retries it.
    const lost = (err: Error) => this.logger.warn({ err: err.message }, 'outbox relay lost its database connection mid-window; will retry');
    connection.on('error', lost);
    // Until the commit or rollback has run: a failed statement leaves the transaction aborted, and the
    // connection must not go back to the pool so.
    let open = true;
    try {
      const [, lock, read] = (await connection.query(
        `BEGIN; SELECT pg_try_advisory_xact_lock(hashtext(${connection.escapeLiteral(`crm:outbox:${this.options.schema}`)})) AS locked;
         SELECT seq, event_id, payload, trace_context FROM outbox WHERE published_seq IS NULL ORDER BY seq LIMIT ${WINDOW}`,
      )) as unknown as [unknown, QueryResult<{ locked: boolean }>, QueryResult<OutboxRow>];
      if (!lock.rows[0].locked) {
        await connection.query('ROLLBACK');
        open = false;
        return 0;
      }
      const rows = read.rows;
      const stream = this.identity?.created ?? '';
      const { acknowledged, failure } = await this.send(js, rows);
      // What JetStream acknowledged is marked with where it was stored, even when an earlier row failed: the
      // failed row stays unmarked and is published again first, and the acknowledged copy of a later one is
      // what JetStream keeps. Marked rows stay until the log and the intake have read past them (OutboxLedger).
      // seq and the stream sequence are integers: digits only, so they are safe inline in the simple query.
      const marks = acknowledged.map(({ row, ack }) => `(${BigInt(row.seq)},${BigInt(ack.seq)})`).join(',');
      await connection.query(
        acknowledged.length
          ? `UPDATE outbox o SET published_stream = ${connection.escapeLiteral(stream)}, published_seq = m.stored
             FROM (VALUES ${marks}) AS m(seq, stored) WHERE o.seq = m.seq; COMMIT`
          : 'COMMIT',
      );
      open = false;
      // A fresh acknowledgement below one seen before comes from a stream made again since the identity was read.
      const fresh = acknowledged.filter(({ ack }) => !ack.duplicate).map(({ ack }) => ack.seq);
      if (fresh.length && Math.min(...fresh) < this.highestSeq) this.identity = undefined;
      this.highestSeq = Math.max(this.highestSeq, ...fresh);
      if (failure) throw failure;
      return rows.length;
    } catch (err) {
      if (open) await connection.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await runner.release();
      connection.removeListener('error', lost);
    }
  }

  /**
   * Publishes a window's rows in outbox order without waiting for acknowledgements, on one connection, so
   * JetStream receives and stores them in that order (docs/events.md, "The relay"); connected to a NATS
   * cluster, at most one event per resource is unacknowledged at a time. After a failure or on
   * a new connection the first row goes alone and the rest follow its acknowledgement. The publishes settle,
   * and the rows acknowledged are reported with the first failure.
   */
  private async send(js: JetStreamClient, rows: OutboxRow[]): Promise<{ acknowledged: Array<{ row: OutboxRow; ack: PubAck }>; failure?: Error }> {
    const acked = new Array<PubAck | undefined>(rows.length).fill(undefined);
    const settling: Array<Promise<void>> = [];
    let failure: Error | undefined;
    const sentAt = Date.now();
    let sent = 0;
    const sendNext = () => {
      const i = sent++;
      const row = rows[i];
      const settled = this.publish(js, row).then(
        (ack) => {
          acked[i] = ack;
          this.check(row, ack);
        },
        (err: Error) => {
          failure ??= err;
        },
      );
      settling.push(settled);
      return settled;
    };
    if (this.probe && rows.length) {
      await sendNext();
      if (!failure) this.probe = false;
    }
    if (this.publisher?.nc.info?.cluster === undefined) {
      // One server: the rest in one go, without yielding between publishes (a service's request handling
      // would otherwise run between them and stretch each window; a sync's outbox fell several windows behind).
      if (!failure) while (sent < rows.length) void sendNext();
    } else {
      // A cluster can lose a message on the way to the stream's leader and store a later one from the same
      // connection, so a row waits for the acknowledgement of its resource's event in flight, and every row
      // behind it waits too (the window stays in outbox order).
      const unconfirmed = new Map<string, Promise<void>>();
      while (sent < rows.length && !failure) {
        const key = resourceKey(rows[sent].payload);
        const before = unconfirmed.get(key);
        if (before) await before;
        if (!failure) unconfirmed.set(key, sendNext());
      }
    }
    await Promise.all(settling);
    if (failure) {
      this.probe = true;
      // The stream may have gone, or been made again: its identity is read again before the next window.
      this.identity = undefined;
      this.doubt(
        rows.slice(0, sent),
        acked.map((a) => a !== undefined),
        sentAt,
      );
    }
    return { acknowledged: rows.flatMap((row, i) => (acked[i] ? [{ row, ack: acked[i]! }] : [])), failure };
  }

  private publish(js: JetStreamClient, row: OutboxRow): Promise<PubAck> {
    const publish = (headers?: MsgHdrs) =>
      js.publish(eventSubject(this.options.namespace, row.payload.type), encodeJson(row.payload), {
        msgID: row.event_id,
        expect: { streamName: this.streamName },
        timeout: PUBLISH_TIMEOUT_MS,
        headers,
      });
    if (!row.trace_context) return publish();
    // Traced: a producer span under the one that recorded the event; readers continue from its traceparent.
    return inSpan(tracer, `publish ${row.payload.type}`, { kind: SpanKind.PRODUCER, parent: contextFrom(row.trace_context) }, () => {
      const headers = natsHeaders();
      const traceparent = traceparentOf();
      if (traceparent) headers.set('traceparent', traceparent);
      return publish(headers);
    });
  }

  /**
   * After a failed window: the rows it sent that were not acknowledged although a later event of their
   * resource was. Their next acknowledgement settles it (see `check`).
   */
  private doubt(sent: OutboxRow[], acked: boolean[], sentAt: number): void {
    const later = new Set<string>();
    for (let i = sent.length - 1; i >= 0; i--) {
      const key = resourceKey(sent[i].payload);
      if (acked[i]) later.add(key);
      else if (later.has(key) && !this.doubtful.has(sent[i].event_id)) this.doubtful.set(sent[i].event_id, { type: sent[i].payload.type, sentAt });
    }
    // Rows another replica published are never checked here; forget them once no ack could tell.
    for (const [id, doubt] of this.doubtful) if (Date.now() - doubt.sentAt > 2 * DUPLICATE_WINDOW_MS) this.doubtful.delete(id);
  }

  /**
   * A doubtful row's new acknowledgement: a duplicate means its first publish had been stored, ahead of
   * the later event of its resource; a fresh store means it had been lost while the later one landed.
   */
  private check(row: OutboxRow, ack: PubAck): void {
    if (!this.doubtful.size) return;
    const doubt = this.doubtful.get(row.event_id);
    if (!doubt) return;
    this.doubtful.delete(row.event_id);
    if (ack.duplicate) return;
    if (Date.now() - doubt.sentAt >= DUPLICATE_WINDOW_MS) {
      // Past the duplicate window a stored copy is stored again, so the ack cannot tell.
      this.logger.warn(
        { event_id: row.event_id, type: doubt.type },
        'outbox relay could not verify the order of an event republished after the duplicate window',
      );
      return;
    }
    this.metrics.outboxOrderBreaks.inc();
    this.logger.error(
      { event_id: row.event_id, type: doubt.type, stream_seq: ack.seq },
      'an event reached the stream after a later event of its resource: JetStream lost its first publish and stored the later one',
    );
  }
}

/** The data field naming an event's resource, where it is not `<resource>_id`. */
const RESOURCE_ID_FIELD: Record<string, string> = { object_record: 'record_id', api_key: 'key_id' };

/**
 * The resource an event belongs to, the unit the relay keeps in order: the resource its type names
 * (`contact.company_added` is the contact's, `trigger.deal.stale` the deal's) and the id its data
 * gives it. An event without one is ordered with every event of its type.
 */
export function resourceKey(event: DomainEvent): string {
  const parts = event.type.split('.');
  const resource = parts[parts.length - 2];
  const id = (event.data as unknown as Record<string, unknown> | undefined)?.[RESOURCE_ID_FIELD[resource] ?? `${resource}_id`];
  return typeof id === 'string' ? `${resource}:${id}` : `type:${event.type}`;
}
