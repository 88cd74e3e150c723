import { contextFrom, Logger, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { DomainEvent, eventStreamName } from '@crm/contracts';
import { ConsumerMessages, DeliverPolicy, NatsConnection } from 'nats';
import { handleOrPark, RetryPolicy } from './dead-events/bounded-handling';
import { ensureEventStream, PULL_EXPIRES_MS } from './jetstream';
import { messageBatches, sleepUnlessStopped } from './message-batches';
import { decodeJson } from './nats';

export interface SequencedEvent {
  /** The event's JetStream stream sequence: its place in the stream. */
  seq: number;
  event: DomainEvent;
  /**
   * When tracing is on and the change was traced: the `traceparent` of this reader's span for the
   * event, for a handler that carries the trace further (webhook delivery).
   */
  traceparent?: string;
}

const tracer = tracerFor('events');

export interface EventStreamReaderOptions {
  nc: NatsConnection;
  namespace: string;
  /** For logs. */
  name: string;
  /** Stream sequence of the last event the owner committed; reading resumes right after it. */
  checkpoint: () => Promise<number>;
  /**
   * Handles events in stream order. It must store the last `seq` as its checkpoint in the same
   * transaction as its effects, and skip events at or below the stored checkpoint.
   */
  handle: (events: SequencedEvent[]) => Promise<void>;
  /**
   * Records an event `handle` still failed on after `retry.maxAttempts` tries, and moves the checkpoint
   * to its `seq`, in one transaction; reading then goes on after it. Without it a failing event is
   * retried (from the checkpoint) until it succeeds.
   */
  park?: (item: SequencedEvent, err: unknown, attempts: number) => Promise<void>;
  retry?: RetryPolicy;
  logger: Logger;
  batchSize?: number;
  /** A partial batch is handled once no message has arrived for this long; 0: once none is waiting (see `messageBatches`). */
  lingerMs?: number;
}

/** Events in the stream after a reader's checkpoint (a stream sequence). */
export async function streamLag(nc: NatsConnection, namespace: string, checkpoint: number): Promise<number> {
  const jsm = await nc.jetstreamManager();
  const { state } = await jsm.streams.info(eventStreamName(namespace));
  return Math.max(0, state.last_seq - checkpoint);
}

/**
 * Reads the event stream in strict order from a checkpoint the owner keeps in its own database, with
 * an ordered JetStream consumer. Progress lives with the data it produced, so a crash at any point
 * resumes exactly after the last committed event: nothing is skipped, nothing is applied twice, and no
 * redelivery timer can reorder events. A batch that fails is retried event by event; one that keeps
 * failing is parked (when the owner parks) and reading goes on. On any other failure the reader
 * restarts from the checkpoint.
 */
export class EventStreamReader {
  private running = false;
  private loop?: Promise<void>;
  private active?: ConsumerMessages;
  /** Aborted by stop(): every wait of the loop ends at once (see message-batches on why a signal). */
  private stopping = new AbortController();

  constructor(private readonly options: EventStreamReaderOptions) {}

  /** Events in the stream after this reader's checkpoint. */
  async lag(): Promise<number> {
    return streamLag(this.options.nc, this.options.namespace, await this.options.checkpoint());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    this.loop = this.run();
    void this.restartOnReconnect();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopping.abort();
    this.active?.stop();
    await this.loop;
  }

  /**
   * A broker restart loses the ephemeral ordered consumer; rather than wait for missed heartbeats,
   * start over from the checkpoint as soon as the connection is back.
   */
  private async restartOnReconnect(): Promise<void> {
    for await (const status of this.options.nc.status()) {
      if (!this.running) break;
      if (status.type === 'reconnect') this.active?.stop();
    }
  }

  private async run(): Promise<void> {
    const { logger, name } = this.options;
    let backoff = 100;
    while (this.running) {
      try {
        await this.readFromCheckpoint();
        backoff = 100;
      } catch (err) {
        if (!this.running) break;
        logger.warn({ err: (err as Error).message, reader: name }, 'event reader failed; resuming from the checkpoint');
        await sleepUnlessStopped(backoff, this.stopping.signal);
        backoff = Math.min(backoff * 2, 5000);
      } finally {
        this.active?.stop();
        this.active = undefined;
      }
    }
  }

  private async handle(batch: SequencedEvent[]): Promise<void> {
    const { handle, park, retry, logger, name } = this.options;
    if (!park || !retry) return handle(batch);
    const pause = async (ms: number) => (await sleepUnlessStopped(ms, this.stopping.signal)) && this.running;
    const warn = (err: unknown, attempt: number) =>
      logger.warn({ err: (err as Error).message, reader: name, attempt }, 'event reader could not handle events; retrying');
    // A park that fails (its database is down) fails the read: it restarts from the checkpoint.
    // One consumer span per traced event, under the relay's publish span, open while the batch is handled.
    const spans = batch.map((item) =>
      item.traceparent ? tracer.startSpan(`${name} ${item.event.type}`, { kind: SpanKind.CONSUMER }, contextFrom(item.traceparent)) : undefined,
    );
    const traced = batch.map((item, i) => (spans[i] ? { ...item, traceparent: traceparentOf(trace.setSpan(ROOT_CONTEXT, spans[i]!)) } : item));
    try {
      await handleOrPark(traced, handle, park, retry, pause, warn);
    } catch (err) {
      for (const span of spans) span?.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      for (const span of spans) span?.end();
    }
  }

  private async readFromCheckpoint(): Promise<void> {
    const { nc, namespace } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    const linger = this.options.lingerMs ?? 5;
    await ensureEventStream(nc, namespace);
    const from = (await this.options.checkpoint()) + 1;
    const consumer = await nc.jetstream().consumers.get(eventStreamName(namespace), {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: from,
    });
    const messages = await consumer.consume({ max_messages: batchSize, expires: PULL_EXPIRES_MS });
    this.active = messages;
    for await (const batch of messageBatches(messages, batchSize, linger, this.stopping.signal)) {
      await this.handle(batch.map((m) => ({ seq: m.seq, event: decodeJson<DomainEvent>(m.data), traceparent: m.headers?.get('traceparent') || undefined })));
    }
  }
}
