import { eventStreamName, eventSubjectWildcard } from '@crm/contracts';
import { DiscardPolicy, NatsConnection, nanos, RetentionPolicy, StorageType, StreamConfig } from 'nats';

/**
 * Creates (or updates) the stream that carries every domain event. Producers and consumers all call
 * this, so whichever starts first makes it. The stream is transport, not the record: the events
 * service keeps the log, so the stream only has to hold events until every consumer has them.
 */
export interface EventStreamSettings {
  /** How long JetStream keeps events for consumers that fell behind (JETSTREAM_MAX_AGE_HOURS; 7 days if absent). */
  maxAgeSeconds?: number;
  /** Most bytes the stream keeps on each replica, the oldest dropped first past it (JETSTREAM_MAX_BYTES); 0: no size limit. */
  maxBytes?: number;
  /**
   * Copies of the stream a NATS cluster keeps (JETSTREAM_REPLICAS). Only the outbox relays pass these
   * settings: they create the stream, or bring an existing one to them.
   */
  replicas?: number;
}

/** How long the stream keeps events when no setting says otherwise. */
export const DEFAULT_STREAM_MAX_AGE_SECONDS = 7 * 24 * 3600;

/** The limits of the stream's configuration the settings ask for; NATS writes "no size limit" as -1. */
function streamLimits(settings: EventStreamSettings): Pick<StreamConfig, 'max_age' | 'max_bytes'> {
  return { max_age: nanos((settings.maxAgeSeconds ?? DEFAULT_STREAM_MAX_AGE_SECONDS) * 1000), max_bytes: settings.maxBytes ? settings.maxBytes : -1 };
}

/** How long the stream remembers a message id, answering a repeat of it as a duplicate instead of storing it. */
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** The longest a process waits before adding a stream it found missing (see ensureEventStream). */
const CREATE_JITTER_MS = 500;

export async function ensureEventStream(nc: NatsConnection, namespace: string, settings: EventStreamSettings = {}): Promise<string> {
  const jsm = await nc.jetstreamManager();
  const name = eventStreamName(namespace);
  const config: Partial<StreamConfig> & { name: string } = {
    name,
    subjects: [eventSubjectWildcard(namespace)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    ...streamLimits(settings),
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: settings.replicas ?? 1,
  };
  const current = () =>
    jsm.streams.info(name).then(
      (info) => info.config,
      () => undefined,
    );
  let existing = await current();
  if (!existing) {
    // Every relay finds a deleted stream missing at once. NATS 2.9 can leave a stream that several clients add
    // at the same moment unable to deliver to any consumer (seen in 1 of 5 tries with five adding under load,
    // never with one), so each waits a random moment and looks again: the first to add it is usually alone.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * CREATE_JITTER_MS));
    existing = await current();
  }
  if (!existing) {
    try {
      await jsm.streams.add(config);
      return name;
    } catch (err) {
      // A concurrent starter may have created it; that is fine as long as it now exists (with this one's settings, below).
      existing = await current();
      if (!existing) throw err;
    }
  }
  // Made by another (a reader, which gives no settings, or another relay): a setting given and different from
  // the stream's is applied; one not given changes nothing.
  const limits = streamLimits(settings);
  const changes: Partial<StreamConfig> = {
    ...(settings.replicas !== undefined && existing.num_replicas !== settings.replicas && { num_replicas: settings.replicas }),
    ...(settings.maxAgeSeconds !== undefined && existing.max_age !== limits.max_age && { max_age: limits.max_age }),
    ...(settings.maxBytes !== undefined && existing.max_bytes !== limits.max_bytes && { max_bytes: limits.max_bytes }),
  };
  if (Object.keys(changes).length > 0) await jsm.streams.update(name, { ...existing, ...changes });
  return name;
}

/**
 * How long each pull of a consumer or reader stays open. A pull delivers as soon as events arrive, so this
 * sets only what an idle reader costs: a new pull this often and the server's idle heartbeat at half of
 * it, by which a pull the server lost without the connection dropping is noticed (a reconnect restarts
 * readers at once). 5 s cost each reader a wake-up every 2.5 s doing nothing.
 */
export const PULL_EXPIRES_MS = 30_000;

/** The stream as a reader checks it: its identity (creation time) and the sequences it holds. */
export interface StreamState {
  created: string;
  first_seq: number;
  last_seq: number;
}

/** The event stream's identity and range now; fails when there is no stream. */
export async function eventStreamState(nc: NatsConnection, namespace: string): Promise<StreamState> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(eventStreamName(namespace));
  return { created: info.created, first_seq: info.state.first_seq, last_seq: info.state.last_seq };
}

/**
 * The identity of the event stream: its creation time, which a stream deleted and made again (a lost volume,
 * a reinstalled server, an operator's mistake) does not share with the one before.
 */
export async function streamIdentity(nc: NatsConnection, namespace: string): Promise<string> {
  return (await eventStreamState(nc, namespace)).created;
}
