import { DEFAULT_NATS_URL } from '@crm/common';
import { eventStreamName } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, NatsConnection, nanos } from 'nats';
import { DEFAULT_STREAM_MAX_AGE_SECONDS, ensureEventStream } from './jetstream';

describe('the event stream limits', () => {
  const namespace = `t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  let nc: NatsConnection;
  const config = async () => (await (await nc.jetstreamManager()).streams.info(eventStreamName(namespace))).config;

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
  });
  afterAll(async () => {
    await (await nc.jetstreamManager()).streams.delete(eventStreamName(namespace)).catch(() => undefined);
    await nc.close();
  });

  it('creates the stream with 7 days and no size limit by default, and with the settings given', async () => {
    await ensureEventStream(nc, namespace);
    expect(await config()).toMatchObject({ max_age: nanos(DEFAULT_STREAM_MAX_AGE_SECONDS * 1000), max_bytes: -1 });
    expect(DEFAULT_STREAM_MAX_AGE_SECONDS).toBe(7 * 24 * 3600);
    await (await nc.jetstreamManager()).streams.delete(eventStreamName(namespace));

    await ensureEventStream(nc, namespace, { maxAgeSeconds: 3600, maxBytes: 64 * 2 ** 20, replicas: 1 });
    expect(await config()).toMatchObject({ max_age: nanos(3600 * 1000), max_bytes: 64 * 2 ** 20 });
  });

  it('brings an existing stream to changed settings, and leaves it as it is for a caller that gives none', async () => {
    await ensureEventStream(nc, namespace, { maxAgeSeconds: 2 * 3600, maxBytes: 32 * 2 ** 20 });
    expect(await config()).toMatchObject({ max_age: nanos(2 * 3600 * 1000), max_bytes: 32 * 2 ** 20 });
    // A consumer's call passes no settings: the relays' stay.
    await ensureEventStream(nc, namespace);
    expect(await config()).toMatchObject({ max_age: nanos(2 * 3600 * 1000), max_bytes: 32 * 2 ** 20 });
    // 0 lifts the size limit again.
    await ensureEventStream(nc, namespace, { maxBytes: 0 });
    expect(await config()).toMatchObject({ max_age: nanos(2 * 3600 * 1000), max_bytes: -1 });
  });
});
