import { eventStreamName, eventSubjectWildcard } from '@crm/contracts';
import { DiscardPolicy, NatsConnection, nanos, RetentionPolicy, StorageType, StreamConfig } from 'nats';

/**
 * Creates (or updates) the stream that carries every domain event. Producers and consumers all call
 * this, so whichever starts first makes it. The stream is transport, not the record: the events
 * service keeps the log, so the stream only has to hold events until every consumer has them.
 */
export async function ensureEventStream(nc: NatsConnection, namespace: string, maxAgeSeconds = 7 * 24 * 3600): Promise<string> {
  const jsm = await nc.jetstreamManager();
  const name = eventStreamName(namespace);
  const config: Partial<StreamConfig> & { name: string } = {
    name,
    subjects: [eventSubjectWildcard(namespace)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(maxAgeSeconds * 1000),
    duplicate_window: nanos(2 * 60 * 1000),
  };
  try {
    await jsm.streams.info(name);
    return name;
  } catch {
    // not there yet
  }
  try {
    await jsm.streams.add(config);
  } catch (err) {
    // A concurrent starter may have created it; that is fine as long as it now exists.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return name;
}
