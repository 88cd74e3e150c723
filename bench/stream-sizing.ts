import { DEFAULT_NATS_URL } from '@crm/common';
import { eventStreamName } from '@crm/contracts';
import { connect, NatsConnection } from 'nats';
import { alphanumeric, machine, ROOT, runBenchmark, withBenchStack } from './bench-stack';

/**
 * What the JetStream event stream holds per write, for sizing JETSTREAM_MAX_BYTES and the NATS volume:
 * `npm run bench:stream`. Creates BENCH_STREAM_WRITES / 2 contacts with the fields a CRM import carries,
 * then updates each once (two fields and the stage), through the batch API, and reads the stream's own
 * byte count (payload, subject and headers as JetStream stores them) after each phase.
 */
const WRITES = Number(process.env.BENCH_STREAM_WRITES ?? 20_000);
const BATCH = 200;

interface StreamSize {
  messages: number;
  bytes: number;
}

async function streamSize(nc: NatsConnection, stream: string): Promise<StreamSize> {
  const info = await (await nc.jetstreamManager()).streams.info(stream);
  return { messages: info.state.messages, bytes: info.state.bytes };
}

/**
 * Waits until the stream holds at least `messages` and the contacts service's outbox is empty (its health
 * port, PORT + 1): the relay publishes after the commit, so the last events arrive a moment later.
 */
async function settled(nc: NatsConnection, stream: string, messages: number, contactsHealth: string): Promise<StreamSize> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const pending = ((await (await fetch(contactsHealth)).json()) as { details: { outbox: { pending: number } } }).details.outbox.pending;
    const size = await streamSize(nc, stream);
    if (size.messages >= messages && pending === 0) return size;
    if (Date.now() > deadline) throw new Error(`the stream holds ${size.messages} events, ${messages} expected`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  await withBenchStack(ROOT, async (stack) => {
    const namespace = new URL(stack.databaseUrl).pathname.replace(/^\/crm_/, '');
    const stream = eventStreamName(namespace);
    const contactsHealth = `http://127.0.0.1:${Number(new URL(stack.api).port) + 1}/health`;
    const nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
    try {
      const before = await settled(nc, stream, 0, contactsHealth);
      const ids: string[] = [];
      for (let i = 0; i < WRITES / 2; i += BATCH) {
        const items = Array.from({ length: Math.min(BATCH, WRITES / 2 - i) }, (_, j) => ({
          email: `stream-${i + j}-${alphanumeric(6)}@bench.example`,
          first_name: 'Margaret',
          last_name: `Hamilton-${alphanumeric(5)}`,
          phone: `+1 415 555 ${String(1000 + ((i + j) % 9000)).padStart(4, '0')}`,
          title: 'Director of Engineering',
          stage: 'lead',
        }));
        const answer = await stack.post('/contacts/batch', { operation: 'create', items });
        ids.push(...(answer as Array<{ data: { id: string } }>).map((r) => r.data.id));
      }
      const created = await settled(nc, stream, before.messages + ids.length, contactsHealth);
      for (let i = 0; i < ids.length; i += BATCH) {
        const items = ids.slice(i, i + BATCH).map((id) => ({ id, title: 'VP Engineering', stage: 'customer' }));
        await stack.post('/contacts/batch', { operation: 'update', items });
      }
      const updated = await settled(nc, stream, created.messages + ids.length, contactsHealth);
      const per = (a: StreamSize, b: StreamSize) => (b.bytes - a.bytes) / (b.messages - a.messages);
      const createdBytes = per(before, created);
      const updatedBytes = per(created, updated);
      const all = per(before, updated);
      const gb = (bytesPerEvent: number) => ((bytesPerEvent * 1e6) / 2 ** 30).toFixed(2);
      process.stdout.write(
        [
          `Run ${new Date().toISOString()} on ${machine()}: ${ids.length} contacts created and ${ids.length} updated through POST /contacts/batch; the stream's own byte count.`,
          '',
          '| Event | events | bytes per event | GiB per million |',
          '|---|---:|---:|---:|',
          `| contact.created (6 fields) | ${created.messages - before.messages} | ${Math.round(createdBytes)} | ${gb(createdBytes)} |`,
          `| contact.updated (title and stage changed) | ${updated.messages - created.messages} | ${Math.round(updatedBytes)} | ${gb(updatedBytes)} |`,
          `| all | ${updated.messages - before.messages} | ${Math.round(all)} | ${gb(all)} |`,
          '',
        ].join('\n'),
      );
    } finally {
      // The bench stack leaves NATS as it found it.
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
}

runBenchmark(main);
