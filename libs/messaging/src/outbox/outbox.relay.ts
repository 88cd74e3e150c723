import { contextFrom, inSpan, Logger, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { headers as natsHeaders, JetStreamClient, MsgHdrs, NatsConnection } from 'nats';
import { Client } from 'pg';
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
 * Moves committed outbox rows to JetStream, oldest first, and deletes them only after JetStream has
 * acknowledged each one. The event id is the JetStream message id, so a publish repeated after a
 * crash between ack and delete is dropped by the stream's duplicate window (and by the log's unique
 * id after it). One replica at a time drains a schema (advisory lock), which keeps the order.
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

  private async publishBatch(): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    const connection = (await runner.connect()) as { on(event: 'error', listener: (err: Error) => void): void; removeListener(event: 'error', listener: (err: Error) => void): void };
    // The connection stays checked out while events are published to NATS, so no pool listens for its
    // errors then: a database that goes away in that window would be an unhandled 'error' event. The
    // batch then fails at its next statement and the relay retries it.
    const lost = (err: Error) => this.logger.warn({ err: err.message }, 'outbox relay lost its database connection mid-batch; will retry');
    connection.on('error', lost);
    await runner.startTransaction();
    try {
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`crm:outbox:${this.options.schema}`]);
      if (!locked) {
        await runner.rollbackTransaction();
        return 0;
      }
      const rows: OutboxRow[] = await runner.query(`SELECT seq, event_id, payload, trace_context FROM outbox ORDER BY seq LIMIT $1`, [BATCH]);
      const stream = eventStreamName(this.options.namespace);
      for (const row of rows) {
        const publish = (headers?: MsgHdrs) =>
          this.js!.publish(eventSubject(this.options.namespace, row.payload.type), encodeJson(row.payload), {
            msgID: row.event_id,
            expect: { streamName: stream },
            timeout: 5000,
            headers,
          });
        if (!row.trace_context) {
          await publish();
          continue;
        }
        // Traced: a producer span under the one that recorded the event; readers continue from its traceparent.
        await inSpan(tracer, `publish ${row.payload.type}`, { kind: SpanKind.PRODUCER, parent: contextFrom(row.trace_context) }, async () => {
          const headers = natsHeaders();
          const traceparent = traceparentOf();
          if (traceparent) headers.set('traceparent', traceparent);
          await publish(headers);
        });
      }
      if (rows.length) await runner.query(`DELETE FROM outbox WHERE seq = ANY($1::bigint[])`, [rows.map((r) => r.seq)]);
      await runner.commitTransaction();
      return rows.length;
    } catch (err) {
      await runner.rollbackTransaction().catch(() => undefined);
      throw err;
    } finally {
      await runner.release();
      connection.removeListener('error', lost);
    }
  }
}
