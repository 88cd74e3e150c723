import { Logger } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject } from '@crm/contracts';
import { AckPolicy, ConsumerConfig, ConsumerMessages, DeliverPolicy, JsMsg, NatsConnection, nanos } from 'nats';
import { handleOrPark, retryUntilDone, RetryPolicy, StoppedWhileRetrying } from './dead-events/bounded-handling';
import { ensureEventStream, PULL_EXPIRES_MS } from './jetstream';
import { messageBatches, sleepUnlessStopped } from './message-batches';
import { decodeJson } from './nats';

export interface DurableConsumerOptions {
  nc: NatsConnection;
  namespace: string;
  /** Durable name: the stream remembers how far this consumer got, across restarts. */
  durable: string;
  /**
   * Event types to handle (all when omitted). One type is filtered by the server; several are filtered
   * here, because multi-subject consumer filters need NATS 2.10 and deployments may run 2.9.
   */
  types?: string[];
  /** Called with events in stream order; must be idempotent (redelivery after a crash is possible). */
  handle: (events: DomainEvent[]) => Promise<void>;
  /**
   * Records an event `handle` still failed on after `retry.maxAttempts` tries; the consumer then
   * acknowledges it and goes on. Without it a failing event is retried until it succeeds.
   */
  park?: (event: DomainEvent, err: unknown, attempts: number) => Promise<void>;
  retry?: RetryPolicy;
  logger: Logger;
  batchSize?: number;
  /** A partial batch is handled once no message has arrived for this long. */
  lingerMs?: number;
}

/**
 * Reads a durable JetStream consumer in batches (the server pushes messages as they are published;
 * see `messageBatches`) and acknowledges a batch only after `handle` resolved, i.e. after the caller
 * committed. A failing batch is retried in place, event by event with
 * backoff, before anything newer is fetched, so events are handled in stream order even across
 * failures; an event that fails `retry.maxAttempts` times is parked and the rest go on.
 */
export class DurableEventConsumer {
  private running = false;
  private loop?: Promise<void>;
  private active?: ConsumerMessages;
  /** Aborted by stop(): every wait of the loop ends at once (see message-batches on why a signal). */
  private stopping = new AbortController();

  constructor(private readonly options: DurableConsumerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run();
  }

  /** Events of its types the stream holds for this consumer that it has not acknowledged yet. */
  async lag(): Promise<number> {
    const jsm = await this.options.nc.jetstreamManager();
    const info = await jsm.consumers.info(eventStreamName(this.options.namespace), this.options.durable);
    return info.num_pending + info.num_ack_pending;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.active?.stop();
    await this.loop;
  }

  /** Keeps the batch's messages from being redelivered while it is retried; resolves false once stopping. */
  private async pause(ms: number, messages: JsMsg[]): Promise<boolean> {
    for (const m of messages) m.working();
    return (await sleepUnlessStopped(ms, this.stopping.signal)) && this.running;
  }

  private async handleBatch(events: DomainEvent[], messages: JsMsg[]): Promise<void> {
    const { handle, park, durable, logger } = this.options;
    const warn = (err: unknown) => logger.warn({ err: (err as Error).message, durable }, 'event consumer could not handle a batch; retrying');
    if (park && this.options.retry) {
      const pause = (ms: number) => this.pause(ms, messages);
      await handleOrPark(
        events,
        handle,
        (event, err, attempts) => retryUntilDone(() => park(event, err, attempts), pause, warn),
        this.options.retry,
        pause,
        warn,
      );
      return;
    }
    let backoff = 100;
    for (;;) {
      try {
        await handle(events);
        return;
      } catch (err) {
        if (!this.running) throw new StoppedWhileRetrying();
        warn(err);
        if (!(await this.pause(backoff, messages))) throw new StoppedWhileRetrying();
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private async ensureConsumer(): Promise<void> {
    const { nc, namespace, durable, types } = this.options;
    const stream = await ensureEventStream(nc, namespace);
    const jsm = await nc.jetstreamManager();
    const config: Partial<ConsumerConfig> = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(60_000),
      max_ack_pending: 10_000,
      ...(types?.length === 1 ? { filter_subject: eventSubject(namespace, types[0]) } : {}),
    };
    try {
      await jsm.consumers.info(stream, durable);
      await jsm.consumers.update(stream, durable, config);
    } catch {
      await jsm.consumers.add(stream, config);
    }
  }

  private async run(): Promise<void> {
    const { nc, namespace, durable, logger } = this.options;
    const batchSize = this.options.batchSize ?? 256;
    const linger = this.options.lingerMs ?? 5;
    const wanted = this.options.types?.length ? new Set(this.options.types) : undefined;
    let ready = false;
    let backoff = 100;
    while (this.running) {
      try {
        if (!ready) {
          await this.ensureConsumer();
          ready = true;
        }
        const consumer = await nc.jetstream().consumers.get(eventStreamName(namespace), durable);
        // Messages buffered here while a batch is retried for longer than ack_wait are delivered again
        // later: a duplicate after newer events, which idempotent handlers take.
        this.active = await consumer.consume({ max_messages: batchSize, expires: PULL_EXPIRES_MS });
        for await (const messages of messageBatches(this.active, batchSize, linger, this.stopping.signal)) {
          const events = messages.map((m) => decodeJson<DomainEvent>(m.data)).filter((e) => !wanted || wanted.has(e.type));
          // A batch of only other types (filtered here, see `types`) has nothing to handle: no transaction.
          if (events.length) await this.handleBatch(events, messages);
          backoff = 100;
          await acknowledge(messages);
        }
      } catch (err) {
        if (!this.running) return;
        ready = false;
        logger.warn({ err: (err as Error).message, durable }, 'event consumer lost JetStream; retrying');
        await sleepUnlessStopped(backoff, this.stopping.signal);
        backoff = Math.min(backoff * 2, 5000);
      } finally {
        this.active?.stop();
        this.active = undefined;
      }
    }
  }
}

/**
 * Acknowledges a batch with one round trip: plain acks for all but the last, which waits for the
 * server's confirmation. The server handles one connection's messages in order, so once the last is
 * confirmed the others have been received too. An ack that is lost (the connection dropped) only means
 * redelivery after ack_wait, which handlers are built to take.
 */
async function acknowledge(messages: JsMsg[]): Promise<void> {
  for (let i = 0; i < messages.length - 1; i++) messages[i].ack();
  await messages[messages.length - 1].ackAck().catch(() => false);
}
