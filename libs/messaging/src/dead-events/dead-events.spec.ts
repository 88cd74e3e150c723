import { createLogger, DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, openDatabase } from '@crm/common';
import { DomainEvent, EventType, eventSubject } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DurableEventConsumer } from '../event-consumer';
import { EventStreamReader, SequencedEvent } from '../event-stream-reader';
import { ensureEventStream } from '../jetstream';
import { MessagingMetrics } from '../messaging.metrics';
import { encodeJson } from '../nats';
import { RetryPolicy } from './bounded-handling';
import { countDeadEvents, listDeadEvents } from './dead-event.store';
import { deadEventsCommand } from './dead-events.cli';
import { CreateDeadEvents1763900000000 } from './dead-events.migration';
import { DeadEvents } from './dead-events.service';

/** Real PostgreSQL and NATS: an event that always fails is parked after its attempts, the rest go on. */
describe('dead events', () => {
  // The run's prefix lets the end-of-run check find anything this suite failed to remove.
  const namespace = `t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  const schema = 'deals';
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/crm_${namespace}`;
  const databaseUrl = url.toString();
  const logger = createLogger('dead-events-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const policy: RetryPolicy = { maxAttempts: 3, firstDelayMs: 10, maxDelayMs: 40 };
  let nc: NatsConnection;
  let dataSource: DataSource;
  let deadEvents: DeadEvents;
  let metrics: MessagingMetrics;
  let counter = 0;

  const event = (tag: string): DomainEvent => ({
    id: `evt_${tag}_${++counter}`,
    type: EventType.ContactCreated,
    occurred_at: new Date().toISOString(),
    data: { contact_id: `con_${tag}_${counter}`, email: `${tag}@example.com` },
  });
  const publish = async (...events: DomainEvent[]) => {
    for (const e of events) await nc.jetstream().publish(eventSubject(namespace, e.type), encodeJson(e), { msgID: e.id });
  };
  const until = async (check: () => boolean | Promise<boolean>, what: string) => {
    const deadline = Date.now() + 50_000; // a safety net inside the jest timeout, not an expected speed
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
    await ensureEventStream(nc, namespace);
    dataSource = await openDatabase({ url: databaseUrl, schema, entities: [], migrations: [CreateDeadEvents1763900000000], poolSize: 4 });
    await dataSource.query(`CREATE TABLE reader_checkpoint (stream_seq bigint NOT NULL); INSERT INTO reader_checkpoint VALUES (0)`);
    metrics = new MessagingMetrics(dataSource);
    deadEvents = new DeadEvents(
      dataSource,
      { service: 'deals' as never, namespace, logger, databaseUrl, natsUrl: process.env.NATS_URL ?? DEFAULT_NATS_URL, schema, eventRetry: policy },
      metrics,
    );
  });

  afterAll(async () => {
    await dataSource?.destroy();
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(`${namespace.toUpperCase()}_EVENTS`).catch(() => undefined);
    await nc.close();
    const admin = new Client({ connectionString: databaseUrl.replace(/\/crm_[^/]+$/, '/postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await admin.end();
  });

  it('a durable consumer tries a failing event maxAttempts times, parks it with the error, goes on, and replays it when asked', async () => {
    const [first, poison, third, later] = [event('first'), event('poison'), event('third'), event('later')];
    const handled: string[] = [];
    let poisonTries = 0;
    let poisonCured = false;
    const handle = async (events: DomainEvent[]) => {
      if (events.some((e) => e.id === poison.id) && !poisonCured) {
        poisonTries++;
        throw new Error(`cannot handle ${poison.id}`);
      }
      handled.push(...events.map((e) => e.id));
    };
    deadEvents.register('durable-test', (e) => handle([e]));
    const consumer = new DurableEventConsumer({
      nc,
      namespace,
      durable: 'durable-test',
      handle,
      park: (e, err, attempts) => deadEvents.park({ consumer: 'durable-test', event: e, error: err, attempts }),
      retry: policy,
      logger,
    });
    await publish(first, poison, third);
    consumer.start();
    try {
      await until(() => handled.includes(third.id), 'the event after the poison');
      expect(handled.filter((id) => id !== poison.id)).toEqual([first.id, third.id]);
      const [dead] = await listDeadEvents(dataSource, { consumer: 'durable-test' });
      expect(dead).toMatchObject({ consumer: 'durable-test', event: poison, attempts: policy.maxAttempts, seq: null, retryRequestedAt: null });
      expect(dead.error).toBe(`Error: cannot handle ${poison.id}`);
      // One try with its batch, then maxAttempts on its own.
      expect(poisonTries).toBe(policy.maxAttempts + 1);

      // The consumer is not stuck: a later event is handled, and nothing else is parked.
      await publish(later);
      await until(() => handled.includes(later.id), 'a later event');
      expect(await countDeadEvents(dataSource)).toEqual({ 'durable-test': 1 });
      expect(await deadEvents.counts()).toEqual({ 'durable-test': 1 });
      expect(await metrics.registry.metrics()).toContain('crm_dead_events{consumer="durable-test"} 1');

      // Not asked to retry: nothing is replayed.
      expect(await deadEvents.replayRequested()).toBe(0);
      poisonCured = true;
      const io = { out: jest.fn(), err: jest.fn() };
      expect(await deadEventsCommand(['retry', '--service', schema, '--id', dead.id], { DATABASE_URL: databaseUrl }, io)).toBe(0);
      expect(io.err).toHaveBeenCalledWith(`asked deals to retry 1 event(s): ${dead.id}`);
      expect(await deadEvents.replayRequested()).toBe(1);
      expect(handled).toContain(poison.id);
      expect(await listDeadEvents(dataSource)).toEqual([]);
    } finally {
      await consumer.stop();
    }
  });

  it('a stream reader parks a failing event together with its checkpoint and reads on', async () => {
    const [before, poison, after] = [event('before'), event('poison'), event('after')];
    const copied: string[] = [];
    const checkpoint = async () => Number((await dataSource.query(`SELECT stream_seq::text AS seq FROM reader_checkpoint`))[0].seq);
    const handle = async (batch: SequencedEvent[]) => {
      const fresh = await dataSource.transaction(async (m) => {
        const [{ seq }] = await m.query(`SELECT stream_seq::text AS seq FROM reader_checkpoint FOR UPDATE`);
        const unseen = batch.filter((b) => b.seq > Number(seq));
        if (unseen.some((b) => b.event.id === poison.id)) throw new Error('the poison again');
        if (unseen.length) await m.query(`UPDATE reader_checkpoint SET stream_seq = $1`, [unseen[unseen.length - 1].seq]);
        return unseen;
      });
      // Only once committed: the test reads the checkpoint as soon as it sees the id.
      copied.push(...fresh.map((b) => b.event.id));
    };
    const reader = new EventStreamReader({
      nc,
      namespace,
      name: 'reader-test',
      checkpoint,
      handle,
      park: (item, err, attempts) =>
        dataSource.transaction(async (m) => {
          await deadEvents.park({ consumer: 'reader-test', event: item.event, seq: item.seq, error: err, attempts }, m);
          await m.query(`UPDATE reader_checkpoint SET stream_seq = GREATEST(stream_seq, $1)`, [item.seq]);
        }),
      retry: policy,
      logger,
    });
    await publish(before, poison, after);
    reader.start();
    try {
      await until(() => copied.includes(after.id), 'the event after the poison');
      expect(copied.filter((id) => [before.id, poison.id, after.id].includes(id))).toEqual([before.id, after.id]);
      const dead = await listDeadEvents(dataSource, { consumer: 'reader-test' });
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ event: poison, attempts: policy.maxAttempts, error: 'Error: the poison again' });
      expect(dead[0].seq).toBeGreaterThan(0);
      expect(await checkpoint()).toBeGreaterThan(dead[0].seq!);

      const io = { out: jest.fn(), err: jest.fn() };
      expect(await deadEventsCommand(['list', '--service', schema, '--consumer', 'reader-test'], { DATABASE_URL: databaseUrl }, io)).toBe(0);
      expect(io.out).toHaveBeenCalledTimes(1);
      expect(io.out.mock.calls[0][0]).toMatch(
        new RegExp(`^${dead[0].id}\treader-test\t${poison.id}\tcontact.created\tattempts=3\t.+\tparked\tError: the poison again$`),
      );
    } finally {
      await reader.stop();
    }
  });

  it('the command refuses unclear requests with usage', async () => {
    const io = { out: jest.fn(), err: jest.fn() };
    expect(await deadEventsCommand(['retry', '--service', schema], { DATABASE_URL: databaseUrl }, io)).toBe(2);
    expect(await deadEventsCommand(['list', '--service', 'gateway'], { DATABASE_URL: databaseUrl }, io)).toBe(2);
    expect(await deadEventsCommand(['retry', '--service', schema, '--id', 'x; drop'], { DATABASE_URL: databaseUrl }, io)).toBe(2);
    expect(await deadEventsCommand(['purge', '--service', schema], { DATABASE_URL: databaseUrl }, io)).toBe(2);
    expect(io.out).not.toHaveBeenCalled();
  });
});
