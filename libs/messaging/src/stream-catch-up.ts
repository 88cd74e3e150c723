import { setTimeout as sleep } from 'timers/promises';
import { NatsConnection } from 'nats';
import { eventStreamState } from './jetstream';
import type { MessagingMetrics } from './messaging.metrics';
import { AnchoredCheckpoint, streamVerdict } from './stream-recovery';

export interface StreamCatchUp {
  nc: NatsConnection;
  namespace: string;
  /** The reader's name in metrics (`event-log`, `webhooks-intake`). */
  consumer: string;
  checkpoint: () => Promise<AnchoredCheckpoint>;
  metrics: MessagingMetrics;
  /** How long to wait at most; past it the caller goes on with what the reader has copied. */
  timeoutMs: number;
  pollMs?: number;
}

/**
 * Waits until a reader of the event stream has committed every message the stream held when this was
 * called. An erasure asks it before it redacts a copy of the stream (the event log, the webhooks' copies):
 * an event published before the erasure's earlier steps but not yet copied would otherwise be copied after
 * the redaction, with the person in it. Events published later were redacted in their outbox by those
 * steps, so the stream's last sequence now is the bound. Answers whether the reader got there: false past
 * `timeoutMs`, or when its checkpoint belongs to another stream (a reset: the reader recovers from the
 * services' outboxes, which the erasure has redacted already).
 */
export async function awaitStreamCatchUp(options: StreamCatchUp): Promise<boolean> {
  const state = await eventStreamState(options.nc, options.namespace);
  const waiting = options.metrics.streamCatchUps.labels(options.consumer);
  const deadline = Date.now() + options.timeoutMs;
  waiting.inc();
  try {
    for (;;) {
      const checkpoint = await options.checkpoint();
      const verdict = streamVerdict(checkpoint, state);
      if (verdict !== undefined && verdict !== 'adopt') return false;
      if (checkpoint.seq >= state.last_seq) return true;
      if (Date.now() >= deadline) return false;
      await sleep(options.pollMs ?? 50);
    }
  } finally {
    waiting.dec();
  }
}
