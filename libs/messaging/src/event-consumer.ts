import { Logger } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject, ServiceName } from '@crm/contracts';
import { AckPolicy, ConsumerConfig, ConsumerMessages, DeliverPolicy, JsMsg, NatsConnection, NatsError, nanos } from 'nats';
import { handleOrPark, retryUntilDone, RetryPolicy, StoppedWhileRetrying } from './dead-events/bounded-handling';
import { ensureEventStream, eventStreamState, PULL_EXPIRES_MS } from './jetstream';
import { messageBatches, sleepUnlessStopped } from './message-batches';
import type { MessagingMetrics } from './messaging.metrics';
import { decodeJson } from './nats';
import { recoverFromOutboxes, recoverReader } from './stream-recovery';

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
  /**
   * Repair after a stream reset (docs/operations.md, "Stream reset"): the services that produce the events
   * this consumer handles, asked for their outboxes when the consumer is not on the stream (the stream was
   * deleted or made again, which deletes its consumers), before it is made again there.
   */
  recovery?: { services: readonly ServiceName[]; metrics: MessagingMetrics };
}

/** How often a running consumer checks that the stream is still the one its consumer is on. */
const WATCH_EVERY_MS = 2000;
/** JetStream's answer to the info of a consumer the stream does not have. */
const CONSUMER_NOT_FOUND = 10014;

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
  /** The identity of the stream the consumer is on, the last sequence it acknowledged there, and the last it saw. */
  private stream?: string;
  private acked = 0;
  private lastSeen?: number;
  /** Set by the watch when the stream is no longer the consumer's: the loop makes the consumer again. */
  private streamChanged = false;

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
    this.streamChanged = false;
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
    const found = await jsm.consumers.info(stream, durable).then(
      () => true,
      (err: NatsError) => {
        if (err.api_error?.err_code === CONSUMER_NOT_FOUND) return false;
        throw err;
      },
    );
    const state = await eventStreamState(nc, namespace);
    if (found) {
      await jsm.consumers.update(stream, durable, config);
    } else {
      // Not on the stream: its first start, or a stream deleted or made again (which deleted the consumer).
      // What the producing services still hold is handled first; the consumer made again then reads the
      // whole new stream. Handlers are idempotent, so what both bring is handled twice, harmlessly.
      if (this.options.recovery) await this.recover(state);
      try {
        await jsm.consumers.add(stream, config);
      } catch (err) {
        // Another replica may have made it meanwhile; that is fine as long as it now exists.
        await jsm.consumers.info(stream, durable).catch(() => {
          throw err;
        });
      }
    }
    if (this.stream !== state.created) {
      this.stream = state.created;
      this.acked = 0;
      this.lastSeen = state.last_seq;
    }
  }

  /**
   * Handles what the producing services' outboxes hold. When this process was reading another stream, that
   * is a reset: counted and logged, with the old stream's sequences after the last one acknowledged that no
   * outbox held counted as lost (recoverReader); at a start there is nothing known to compare with.
   */
  private async recover(state: Awaited<ReturnType<typeof eventStreamState>>): Promise<void> {
    const { nc, namespace, durable, logger, types, handle } = this.options;
    const { services, metrics } = this.options.recovery!;
    const wanted = types?.length ? new Set(types) : undefined;
    const apply = async (events: DomainEvent[]) => {
      const mine = events.filter((e) => !wanted || wanted.has(e.type));
      if (mine.length) await handle(mine);
    };
    const outboxes = { nc, namespace, logger, name: durable, apply, services };
    const reset = this.stream !== undefined && this.stream !== state.created;
    if (reset) {
      metrics.streamResets.inc({ consumer: durable, reason: 'replaced' });
      logger.error(
        { consumer: durable, acked: this.acked, previous_stream: this.stream, stream: state.created },
        'the event stream is not the one this consumer was reading; recovering from the outboxes',
      );
    }
    metrics.streamRecovering.set({ consumer: durable }, 1);
    try {
      if (reset) {
        const previous = { seq: this.acked, stream: this.stream! };
        await recoverReader({ reason: 'replaced', previous, state, lastSeen: this.lastSeen }, this.stopping.signal, {
          ...outboxes,
          metrics,
          move: async () => true,
        });
        logger.warn({ consumer: durable }, 'recovered from the stream reset; reading the new stream');
      } else {
        await recoverFromOutboxes({ ...outboxes, previousStream: null, signal: this.stopping.signal });
      }
    } finally {
      metrics.streamRecovering.set({ consumer: durable }, 0);
    }
  }

  /** Stops the consumption when the stream is gone or is not the one the consumer was made on. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    const state = await eventStreamState(this.options.nc, this.options.namespace).catch(() => undefined);
    if (state && state.created === this.stream) {
      this.lastSeen = Math.max(this.lastSeen ?? 0, state.last_seq);
      return;
    }
    this.streamChanged = true;
    if (this.active === messages) messages.stop();
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
        const active = await consumer.consume({ max_messages: batchSize, expires: PULL_EXPIRES_MS });
        this.active = active;
        // A deleted stream takes its consumers with it; a stream made again has none: the watch notices.
        const watch = this.options.recovery ? setInterval(() => void this.watch(active), WATCH_EVERY_MS) : undefined;
        try {
          for await (const messages of messageBatches(active, batchSize, linger, this.stopping.signal)) {
            const events = messages.map((m) => decodeJson<DomainEvent>(m.data)).filter((e) => !wanted || wanted.has(e.type));
            // A batch of only other types (filtered here, see `types`) has nothing to handle: no transaction.
            if (events.length) await this.handleBatch(events, messages);
            backoff = 100;
            await acknowledge(messages);
            this.acked = Math.max(this.acked, messages[messages.length - 1].info.streamSequence);
          }
        } finally {
          clearInterval(watch);
        }
        if (this.streamChanged) {
          this.streamChanged = false;
          ready = false;
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
