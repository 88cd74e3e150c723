import { contextFrom, inSpan, Logger, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { headers as natsHeaders, JetStreamClient, MsgHdrs, NatsConnection } from 'nats';
import { Client, PoolClient, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { ensureEventStream } from '../jetstream';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { encodeJson, NATS_CONNECTION } from '../nats';
import { outboxChannel } from './outbox.service';

const BATCH = 500;

interface OutboxRow {
  seq: string;
  event_id: string;
  payload: DomainEvent;
  trace_context: string | null;
}

const tracer = tracerFor('outbox');

/**
 * Moves committed outbox rows to JetStream, oldest first, many in flight at once, and deletes them only
 * after JetStream has acknowledged each one. The event id is the JetStream message id, so a publish
 * repeated after a crash between ack and delete, or after a timeout that hid a success, is dropped by
 * the stream's duplicate window (and by the log's unique id after it). A service's outbox is one lane:
 * one replica at a time drains it (advisory lock), in order (docs/events.md, "The relay").
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
  private js?: JetStreamClient;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
  ) {}

  private get logger(): Logger {
    return this.options.logger;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.js = this.nc.jetstream();
    await this.listen();
    this.timer = setInterval(() => this.kick(), this.options.outboxPollMs ?? 1000);
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
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
        await ensureEventStream(this.nc, this.options.namespace, { maxAgeSeconds: this.options.streamMaxAgeSeconds, replicas: this.options.streamReplicas });
        this.streamReady = true;
      }
      while (!this.stopped && (await this.publishBatch()) === BATCH);
      if (this.failing) this.logger.info('outbox relay is publishing again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.logger.warn({ err: (err as Error).message }, 'outbox relay cannot publish yet; will retry');
      this.failing = true;
    }
  }

  /**
   * One window in two round trips to PostgreSQL: the transaction's start, the lock and the read as one
   * simple query, and the delete with the commit as another. The relay runs after every committed
   * change, so its statements are a share of each write's cost; six round trips were. Between the two,
   * the window's events go to JetStream without waiting for each acknowledgement (see `publishWindow`).
   */
  private async publishBatch(): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    const connection = (await runner.connect()) as PoolClient;
    // The connection stays checked out while events are published to NATS, so no pool listens for its
    // errors then: a database that goes away in that window would be an unhandled 'error' event. The
    // batch then fails at its next statement and the relay retries it.
    const lost = (err: Error) => this.logger.warn({ err: err.message }, 'outbox relay lost its database connection mid-batch; will retry');
    connection.on('error', lost);
    // Until the commit or rollback has run: a failed statement leaves the transaction aborted, and the
    // connection must not go back to the pool so.
    let open = true;
    try {
      const [, lock, read] = (await connection.query(
        `BEGIN; SELECT pg_try_advisory_xact_lock(hashtext(${connection.escapeLiteral(`crm:outbox:${this.options.schema}`)})) AS locked;
         SELECT seq, event_id, payload, trace_context FROM outbox ORDER BY seq LIMIT ${BATCH}`,
      )) as unknown as [unknown, QueryResult<{ locked: boolean }>, QueryResult<OutboxRow>];
      if (!lock.rows[0].locked) {
        await connection.query('ROLLBACK');
        open = false;
        return 0;
      }
      const rows = read.rows;
      const { acknowledged, failure } = await this.publishWindow(rows);
      // What JetStream acknowledged goes, even when a later or earlier row failed: a row that failed stays
      // and is published again first, and nothing of its resource was sent after it (see publishWindow).
      // seq is a bigint read as text: digits only, so it is safe inline in the simple query.
      const seqs = acknowledged.map((r) => String(BigInt(r.seq))).join(',');
      await connection.query(acknowledged.length ? `DELETE FROM outbox WHERE seq IN (${seqs}); COMMIT` : 'COMMIT');
      open = false;
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
   * Publishes a window of rows in outbox order without waiting for each acknowledgement, under one rule:
   * a row goes out only once every earlier row that shares a resource with it is acknowledged. So at
   * most one event per resource is ever unconfirmed, and whatever JetStream loses or refuses (a
   * reconnect that drops what was on the wire, a timeout, an error), no later event of that resource
   * can have reached the stream ahead of it. The first failure stops the window: nothing more is sent,
   * the publishes under way settle, and the rows acknowledged so far are reported.
   */
  private async publishWindow(rows: OutboxRow[]): Promise<{ acknowledged: OutboxRow[]; failure?: Error }> {
    const stream = eventStreamName(this.options.namespace);
    const inFlight = new Map<string, Promise<boolean>>();
    const settled: Array<Promise<boolean>> = [];
    const acknowledged: OutboxRow[] = [];
    let failure: Error | undefined;
    for (const row of rows) {
      const key = resourceKey(row.payload);
      const before = inFlight.get(key);
      if (before) await before;
      if (failure) break;
      const publish = (headers?: MsgHdrs) =>
        this.js!.publish(eventSubject(this.options.namespace, row.payload.type), encodeJson(row.payload), {
          msgID: row.event_id,
          expect: { streamName: stream },
          timeout: 5000,
          headers,
        });
      const sent = (
        row.trace_context
          ? // Traced: a producer span under the one that recorded the event; readers continue from its traceparent.
            inSpan(tracer, `publish ${row.payload.type}`, { kind: SpanKind.PRODUCER, parent: contextFrom(row.trace_context) }, () => {
              const headers = natsHeaders();
              const traceparent = traceparentOf();
              if (traceparent) headers.set('traceparent', traceparent);
              return publish(headers);
            })
          : publish()
      ).then(
        () => {
          acknowledged.push(row);
          return true;
        },
        (err: Error) => {
          failure ??= err;
          return false;
        },
      );
      inFlight.set(key, sent);
      settled.push(sent);
    }
    await Promise.all(settled);
    return { acknowledged, failure };
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
