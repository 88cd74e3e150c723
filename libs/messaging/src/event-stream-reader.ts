import { contextFrom, Logger, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { DomainEvent, eventStreamName, streamCheckpointSubject } from '@crm/contracts';
import { ConsumerMessages, DeliverPolicy, NatsConnection } from 'nats';
import { handleOrPark, RetryPolicy } from './dead-events/bounded-handling';
import { ensureEventStream, eventStreamState, PULL_EXPIRES_MS, StreamState, streamIdentity } from './jetstream';
import type { MessagingMetrics } from './messaging.metrics';
import { AnchoredCheckpoint, StreamReset, streamVerdict } from './stream-recovery';
import { messageBatches, sleepUnlessStopped } from './message-batches';
import { decodeJson, encodeJson } from './nats';

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
  /**
   * Says how far this reader has read (`streamCheckpointSubject`), after its batches at most once a second and
   * every few seconds besides, so the producing services can delete the outbox rows it passed. Only the
   * readers the outbox waits for (the event log, the webhook intake) say it.
   */
  announce?: boolean;
  /**
   * The reader's stream identity, kept with its checkpoint: before reading, and every few seconds while it
   * reads, the stream is checked against it (`streamVerdict`). A stream that is not the checkpoint's stops
   * the reader, which counts it, reports recovering, and lets `recover` bring the log in line and move the
   * checkpoint to the new stream (docs/operations.md, "Stream reset").
   */
  anchor?: {
    checkpoint: () => Promise<AnchoredCheckpoint>;
    /** Records the stream's identity with a checkpoint that had none. */
    adopt: (stream: string) => Promise<void>;
    recover: (reset: StreamReset, signal: AbortSignal) => Promise<void>;
    metrics: MessagingMetrics;
  };
}

/** How often a reader says its checkpoint while nothing arrives; after batches, at most once a second. */
const ANNOUNCE_EVERY_MS = 5000;
const ANNOUNCE_AFTER_BATCH_MS = 1000;
/** How often a reader checks, while it waits for events, that the stream is still the one it reads. */
const WATCH_EVERY_MS = 2000;

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
  /** What the reader last committed, on which stream, and when it last said so. */
  private position?: { stream: string; seq: number };
  private announcedAt = 0;
  private announcer?: NodeJS.Timeout;
  /** The highest sequence seen on each stream identity, for what a replaced stream held. */
  private lastSeen?: { stream: string; seq: number };

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
    if (this.options.announce) this.announcer = setInterval(() => this.announce(), ANNOUNCE_EVERY_MS);
  }

  /** Publishes the reader's checkpoint (core NATS: one lost is replaced by the next). */
  private announce(): void {
    if (!this.position) return;
    this.announcedAt = Date.now();
    try {
      this.options.nc.publish(streamCheckpointSubject(this.options.namespace), encodeJson({ consumer: this.options.name, ...this.position }));
    } catch {
      // The connection is closing; the next one says it.
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.announcer);
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

  /** The stream now, remembering how far it went. */
  private async streamState(): Promise<StreamState> {
    const state = await eventStreamState(this.options.nc, this.options.namespace);
    if (this.lastSeen?.stream !== state.created || this.lastSeen.seq < state.last_seq) this.lastSeen = { stream: state.created, seq: state.last_seq };
    return state;
  }

  /**
   * Checks the stream against the checkpoint's: answers the checkpoint to read from, or undefined after
   * adopting an identity or recovering from a reset (the caller reads the checkpoint again).
   */
  private async anchored(): Promise<{ stream: string; seq: number } | undefined> {
    const anchor = this.options.anchor!;
    const { logger, name } = this.options;
    const state = await this.streamState();
    const checkpoint = await anchor.checkpoint();
    const lastSeen = this.lastSeen?.stream === checkpoint.stream ? this.lastSeen?.seq : undefined;
    const verdict = streamVerdict(checkpoint, state, lastSeen);
    if (verdict === undefined) return { stream: state.created, seq: checkpoint.seq };
    if (verdict === 'adopt') {
      await anchor.adopt(state.created);
      return undefined;
    }
    anchor.metrics.streamResets.inc({ consumer: name, reason: verdict.reason });
    anchor.metrics.streamRecovering.set({ consumer: name }, 1);
    logger.error(
      {
        reader: name,
        reason: verdict.reason,
        checkpoint: checkpoint.seq,
        checkpoint_stream: checkpoint.stream,
        stream: state.created,
        first_seq: state.first_seq,
        last_seq: state.last_seq,
      },
      'the event stream is not the one this reader was reading; stopped reading to recover',
    );
    try {
      await anchor.recover(verdict, this.stopping.signal);
    } finally {
      anchor.metrics.streamRecovering.set({ consumer: name }, 0);
    }
    logger.warn({ reader: name, reason: verdict.reason }, 'recovered from the stream reset; reading the stream again');
    return undefined;
  }

  private async readFromCheckpoint(): Promise<void> {
    const { nc, namespace, anchor } = this.options;
    const batchSize = this.options.batchSize ?? 500;
    const linger = this.options.lingerMs ?? 5;
    await ensureEventStream(nc, namespace);
    let start: { stream: string; seq: number } | undefined;
    if (anchor) {
      start = await this.anchored();
      if (!start) return;
    } else {
      start = { stream: await streamIdentity(nc, namespace), seq: await this.options.checkpoint() };
    }
    const stream = start.stream;
    let next = start.seq + 1;
    this.position = { ...start };
    const consumer = await nc.jetstream().consumers.get(eventStreamName(namespace), {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: next,
    });
    const messages = await consumer.consume({ max_messages: batchSize, expires: PULL_EXPIRES_MS });
    this.active = messages;
    // An ordered consumer whose stream went away makes itself again, on whatever stream has the name now,
    // from the sequence it had reached: the reader stops it as soon as the stream is not the one it reads.
    const watch = anchor ? setInterval(() => void this.watch(stream, () => next, messages), WATCH_EVERY_MS) : undefined;
    try {
      for await (const batch of messageBatches(messages, batchSize, linger, this.stopping.signal)) {
        if (anchor && (batch[0].seq !== next || (await this.streamState()).created !== stream)) {
          this.options.logger.warn({ reader: this.options.name, expected: next, got: batch[0].seq }, 'the event stream changed under the reader; checking it');
          return;
        }
        await this.handle(batch.map((m) => ({ seq: m.seq, event: decodeJson<DomainEvent>(m.data), traceparent: m.headers?.get('traceparent') || undefined })));
        next = batch[batch.length - 1].seq + 1;
        this.position = { stream, seq: next - 1 };
        if (this.options.announce && Date.now() - this.announcedAt >= ANNOUNCE_AFTER_BATCH_MS) this.announce();
      }
    } finally {
      clearInterval(watch);
    }
  }

  /** Stops the reading when the stream is gone, was made again, or no longer holds the next event. */
  private async watch(stream: string, next: () => number, messages: ConsumerMessages): Promise<void> {
    const state = await this.streamState().catch(() => undefined);
    if (state && state.created === stream && state.first_seq <= next()) return;
    if (this.active === messages) messages.stop();
  }
}
