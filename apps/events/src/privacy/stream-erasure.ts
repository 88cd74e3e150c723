import { eventStreamName } from '@crm/contracts';
import { needlePattern } from '@crm/runtime';
import { NatsConnection } from 'nats';

/** How long a message may have been stored before its event's own time (clocks, the outbox's wait). */
const START_MARGIN_MS = 60_000;

/**
 * Removes from the event stream, by sequence with the server's secure erase, every message of an event
 * the log redacted (its message id is the event id) and every other message naming the person. The
 * stream is read from shortly before the earliest such event, in order, with an ordered consumer.
 */
export async function eraseFromStream(
  nc: NatsConnection,
  namespace: string,
  eventIds: ReadonlySet<string>,
  since: Date | undefined,
  needles: readonly string[],
): Promise<number[]> {
  const stream = eventStreamName(namespace);
  const jsm = await nc.jetstreamManager();
  const { state } = await jsm.streams.info(stream);
  if (!state.messages) return [];
  const pattern = needlePattern(needles);
  const consumer = await nc.jetstream().consumers.get(stream, since ? { opt_start_time: new Date(since.getTime() - START_MARGIN_MS).toISOString() } : {});
  const decoder = new TextDecoder();
  const found: number[] = [];
  let reached = false;
  while (!reached) {
    let seen = 0;
    const batch = await consumer.fetch({ max_messages: 500, expires: 2000 });
    for await (const msg of batch) {
      seen++;
      if (msg.seq >= state.last_seq) reached = true;
      if (msg.seq > state.last_seq) continue;
      const id = msg.headers?.get('Nats-Msg-Id');
      const text = decoder.decode(msg.data);
      if ((id && eventIds.has(id)) || (pattern && new RegExp(pattern.source, 'i').test(text))) found.push(msg.seq);
    }
    if (!seen) break;
  }
  for (const seq of found)
    await jsm.streams.deleteMessage(stream, seq, true).catch((error: Error) => {
      // Already gone (an earlier run, max_age): what matters is that it is not there.
      if (!/no message found|not found/i.test(error.message)) throw error;
    });
  return found;
}
