import { createLogger, DEFAULT_NATS_URL } from '@crm/common';
import { DomainEvent, eventStreamName, eventSubject } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { DurableEventConsumer } from './event-consumer';
import { ensureEventStream } from './jetstream';
import { encodeJson } from './nats';

/** A durable consumer against real JetStream: what it hands over, and that every message ends acknowledged. */
describe('DurableEventConsumer', () => {
  const namespace = `t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  const durable = 'probe-consumer';
  let nc: NatsConnection;
  let consumer: DurableEventConsumer | undefined;

  const publish = async (type: string, count: number) => {
    for (let i = 0; i < count; i++) {
      const event = { id: `evt_${type}_${i}`, type, occurred_at: new Date().toISOString(), data: { i } };
      await nc.jetstream().publish(eventSubject(namespace, type), encodeJson(event), { msgID: event.id });
    }
  };
  /** The consumer's position as the server keeps it (nothing delivered yet while it is being created). */
  const state = async () => {
    const info = await (await nc.jetstreamManager()).consumers.info(eventStreamName(namespace), durable).catch(() => undefined);
    return info
      ? { pending: info.num_pending, unacknowledged: info.num_ack_pending, delivered: info.delivered.stream_seq }
      : { pending: -1, unacknowledged: -1, delivered: 0 };
  };

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
    await ensureEventStream(nc, namespace);
  });

  afterAll(async () => {
    await consumer?.stop();
    await (await nc.jetstreamManager()).streams.delete(eventStreamName(namespace)).catch(() => undefined);
    await nc.close();
  });

  it('hands over only the wanted types, never an empty batch, and leaves every message acknowledged', async () => {
    // Unwanted events first, so whole batches hold nothing to handle.
    await publish('contact.created', 300);
    await publish('activity.created', 3);
    await publish('contact.updated', 40);
    await publish('contact.deleted', 2);
    // The probes carry their index as data, not a catalog payload: the consumer hands events over unread.
    const batches: Array<Array<Pick<DomainEvent, 'id' | 'type'> & { data: unknown }>> = [];
    consumer = new DurableEventConsumer({
      nc,
      namespace,
      durable,
      types: ['activity.created', 'contact.deleted'],
      batchSize: 64,
      logger: createLogger('consumer-test', 'silent'),
      handle: async (events) => void batches.push(events),
    });
    consumer.start();
    // Waits for the server to report every message acknowledged; the jest timeout is only the safety net.
    for (;;) {
      const now = await state();
      if (now.delivered === 345 && now.unacknowledged === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await state()).toEqual({ pending: 0, unacknowledged: 0, delivered: 345 });
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    expect(batches.flat().map((e) => `${e.type}:${(e.data as { i: number }).i}`)).toEqual([
      'activity.created:0',
      'activity.created:1',
      'activity.created:2',
      'contact.deleted:0',
      'contact.deleted:1',
    ]);
  });
});
