import type { Logger } from '@crm/common';
import { DomainEvent, outboxReplySubject, outboxRowsSubject, ServiceName } from '@crm/contracts';
import { randomUUID } from 'crypto';
import { NatsConnection } from 'nats';
import type { StreamState } from './jetstream';
import { sleepUnlessStopped } from './message-batches';
import type { MessagingMetrics } from './messaging.metrics';
import { decodeJson, encodeJson } from './nats';
import type { OutboxPage, OutboxPageRequest } from './outbox/outbox-ledger';

/** A reader's checkpoint with the identity of the stream it belongs to (null: recorded before identities were). */
export interface AnchoredCheckpoint {
  seq: number;
  stream: string | null;
}

/**
 * What `npm run restore-reconcile` writes as a reader's stream identity after a database restore: no stream
 * has it, so the reader recovers, and it knows the stream moved on past what the restored database knows.
 */
export const RESTORED_STREAM = 'restored';

export type ResetReason = 'replaced' | 'truncated' | 'restored';

/** A stream that is not the one a checkpoint belongs to, and what the reader knew of the old one. */
export interface StreamReset {
  reason: ResetReason;
  previous: AnchoredCheckpoint;
  state: StreamState;
  /** The highest sequence the reader saw on its checkpoint's stream, when it had read it in this process. */
  lastSeen?: number;
}

/**
 * Whether the stream is the one the checkpoint belongs to: another identity (made again), a last sequence
 * below the checkpoint (made again, seen by a checkpoint without identity), a first sequence past the
 * checkpoint's next (events aged out, or were removed, before they were read), or a checkpoint a restore
 * marked. `adopt`: a checkpoint without identity on a stream that fits it takes this stream's.
 */
export function streamVerdict(checkpoint: AnchoredCheckpoint, state: StreamState, lastSeen?: number): StreamReset | 'adopt' | undefined {
  const reset = (reason: ResetReason): StreamReset => ({ reason, previous: checkpoint, state, lastSeen });
  if (checkpoint.stream === RESTORED_STREAM) return reset('restored');
  if (checkpoint.stream !== null && checkpoint.stream !== state.created) return reset('replaced');
  if (state.last_seq < checkpoint.seq) return reset('replaced');
  if (state.first_seq > checkpoint.seq + 1) return reset('truncated');
  return checkpoint.stream === null ? 'adopt' : undefined;
}

/** Where reading goes on after a recovery: the new stream's start, or, after a restore, its end. */
export function anchorAfter(reset: StreamReset): number {
  return reset.reason === 'restored' ? reset.state.last_seq : Math.max(0, reset.state.first_seq - 1);
}

/** The sequences of the old stream a recovery had to fill, and how many no outbox held. */
export interface StreamGap {
  from_seq: number;
  to_seq: number;
  missing: number;
}

/**
 * Of the old stream's sequences after the checkpoint (up to the first one still there, or the last one seen),
 * those no outbox row said it was stored at: events lost for good. A restore has none (what it skipped is
 * what the restore undid).
 */
export function gapOf(reset: StreamReset, covered: ReadonlySet<number>): StreamGap | undefined {
  if (reset.reason === 'restored') return undefined;
  const from = reset.previous.seq + 1;
  let to = reset.state.first_seq - 1;
  if (reset.reason === 'replaced') {
    // The old stream's end: the last sequence seen on it, or the last an outbox row was stored at.
    to = Math.max(reset.lastSeen ?? 0, reset.previous.seq);
    for (const seq of covered) if (seq > to) to = seq;
  }
  if (to < from) return undefined;
  let held = 0;
  for (const seq of covered) if (seq >= from && seq <= to) held++;
  const missing = to - from + 1 - held;
  return missing > 0 ? { from_seq: from, to_seq: to, missing } : undefined;
}

export interface OutboxRecoveryOptions {
  nc: NatsConnection;
  namespace: string;
  logger: Logger;
  /** The reader, for logs. */
  name: string;
  /** The old stream's identity: rows marked as stored on it count towards what was not lost. */
  previousStream: string | null;
  /** Appends events in the order given, skipping those the reader holds already (by id). */
  apply: (events: DomainEvent[]) => Promise<void>;
  signal: AbortSignal;
  /** The services asked; every service has an outbox. */
  services?: readonly ServiceName[];
  pageSize?: number;
  /** How long one page may take to come. */
  timeoutMs?: number;
}

/**
 * Asks every producing service for its whole outbox, a page at a time in commit order, and applies each
 * page: every event a service still holds that the reader may lack, each resource's events in order.
 * A service that does not answer is asked again until it does (the reader stays in recovery meanwhile).
 * Answers the old stream's sequences the rows were marked as stored at.
 */
export async function recoverFromOutboxes(options: OutboxRecoveryOptions): Promise<Set<number>> {
  const { nc, namespace, logger, name, previousStream, apply, signal } = options;
  const services = options.services ?? (Object.values(ServiceName) as ServiceName[]);
  const covered = new Set<number>();
  for (const service of services) {
    let after = '0';
    let failures = 0;
    let events = 0;
    for (;;) {
      if (signal.aborted) throw new Error('stopped while recovering');
      let page: OutboxPage;
      try {
        page = await requestPage(nc, namespace, service, { after, limit: options.pageSize ?? 500 }, options.timeoutMs ?? 10_000);
      } catch (err) {
        if (failures++ % 10 === 0) logger.warn({ err: (err as Error).message, reader: name, service }, 'waiting for a service to answer for its outbox');
        await sleepUnlessStopped(Math.min(200 * failures, 2000), signal);
        continue;
      }
      failures = 0;
      if (page.rows.length) {
        await apply(page.rows.map((r) => r.event));
        for (const row of page.rows) if (row.stream_seq !== null && (previousStream === null || row.stream === previousStream)) covered.add(row.stream_seq);
        after = page.rows[page.rows.length - 1].seq;
        events += page.rows.length;
      }
      if (!page.more) break;
    }
    logger.info({ reader: name, service, events }, 'recovered what a service held in its outbox');
  }
  return covered;
}

/** One page, answered to a reply subject of the reader's own (the services answer only there). */
async function requestPage(nc: NatsConnection, namespace: string, service: ServiceName, body: OutboxPageRequest, timeoutMs: number): Promise<OutboxPage> {
  const reply = outboxReplySubject(namespace, randomUUID().replace(/-/g, ''));
  const subscription = nc.subscribe(reply, { max: 1, timeout: timeoutMs });
  nc.publish(outboxRowsSubject(namespace, service), encodeJson(body), { reply });
  for await (const msg of subscription) {
    const page = decodeJson<OutboxPage & { error?: string }>(msg.data);
    if (page.error) throw new Error(`${service} could not read its outbox: ${page.error}`);
    return page;
  }
  throw new Error(`${service} did not answer for its outbox`);
}

export interface ReaderRecoveryOptions extends Omit<OutboxRecoveryOptions, 'previousStream' | 'signal'> {
  metrics: MessagingMetrics;
  /**
   * In one transaction with the reader's lock: when the checkpoint is still `reset.previous`, records what the
   * reader records for the gap or the restore and moves the checkpoint to `anchor` on the new stream; answers
   * whether it did (another replica may have recovered first).
   */
  move: (reset: StreamReset, anchor: number, gap: StreamGap | undefined) => Promise<boolean>;
}

/**
 * A reader's whole recovery from a stream reset: what the outboxes hold, the gap nothing held, and the
 * checkpoint moved to the new stream; a gap is counted and logged once, by the replica that moved it.
 */
export async function recoverReader(reset: StreamReset, signal: AbortSignal, options: ReaderRecoveryOptions): Promise<void> {
  const { metrics, move, ...outboxes } = options;
  const covered = await recoverFromOutboxes({ ...outboxes, previousStream: reset.previous.stream, signal });
  const gap = gapOf(reset, covered);
  const moved = await move(reset, anchorAfter(reset), gap);
  if (moved && gap) {
    metrics.streamGapEvents.inc({ consumer: options.name }, gap.missing);
    options.logger.error({ ...gap, reason: reset.reason, reader: options.name }, 'events were lost for good in a stream reset');
  }
}
