import { createLogger, DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, openDatabase } from '@crm/common';
import { DomainEvent, event, eventStreamName, EventType } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MessagingOptions } from '../messaging.options';
import { decodeJson } from '../nats';
import { CreateOutbox1763800000000 } from './outbox.migration';
import { AddOutboxTraceContext1764200000000 } from './outbox-trace.migration';
import { OutboxRelay } from './outbox.relay';
import { OutboxService } from './outbox.service';

/**
 * The outbox against real PostgreSQL and JetStream: events reach the stream in the order their
 * transactions committed, once each, with two relays (two replicas) competing for the same outbox,
 * and nothing is published for a transaction that rolled back.
 */
describe('outbox relay', () => {
  // The run's prefix lets the end-of-run check find anything this suite failed to remove.
  const namespace = `t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/crm_${namespace}`;
  const options: MessagingOptions = {
    service: 'contacts' as MessagingOptions['service'],
    namespace,
    logger: createLogger('outbox-test', process.env.TEST_LOG_LEVEL ?? 'silent'),
    databaseUrl: url.toString(),
    schema: 'contacts',
    outboxPollMs: 50,
  };
  let dataSource: DataSource;
  const connections: NatsConnection[] = [];
  const relays: OutboxRelay[] = [];

  beforeAll(async () => {
    dataSource = await openDatabase({
      url: options.databaseUrl,
      schema: options.schema,
      entities: [],
      migrations: [CreateOutbox1763800000000, AddOutboxTraceContext1764200000000],
      poolSize: 6,
    });
  });

  afterAll(async () => {
    await Promise.all(relays.map((r) => r.onApplicationShutdown()));
    await dataSource?.destroy();
    const nc = connections[0];
    if (nc) {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.delete(eventStreamName(namespace)).catch(() => undefined);
    }
    await Promise.all(connections.map((c) => c.close()));
    const admin = new Client({ connectionString: options.databaseUrl.replace(/\/crm_[^/]+$/, '/postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await admin.end();
  });

  it('publishes committed events once each, in commit order, with two relays competing', async () => {
    const outbox = new OutboxService(options);
    for (let i = 0; i < 2; i++) {
      const nc = await connect({ servers: process.env.NATS_URL ?? DEFAULT_NATS_URL });
      connections.push(nc);
      const relay = new OutboxRelay(dataSource, nc, options);
      relays.push(relay);
      await relay.onApplicationBootstrap();
    }

    const expected: string[] = [];
    for (let tx = 0; tx < 40; tx++) {
      const events = await dataSource.transaction((m) =>
        outbox.appendMany(
          m,
          Array.from({ length: 1 + (tx % 5) }, (_, n) => event(EventType.ContactCreated, { contact_id: `con_${tx}_${n}`, email: `c${tx}.${n}@example.com` })),
        ),
      );
      expected.push(...events.map((e) => e.id));
      // A rolled-back change publishes nothing.
      await dataSource
        .transaction(async (m) => {
          await outbox.append(m, EventType.ContactDeleted, { contact_id: `con_${tx}` });
          throw new Error('rolled back');
        })
        .catch(() => undefined);
    }

    const jsm = await connections[0].jetstreamManager();
    const stream = eventStreamName(namespace);
    const deadline = Date.now() + 50_000; // a safety net inside the jest timeout, not an expected speed
    // Published, and then removed from the outbox in the relay's own commit, which may come a moment later.
    const outboxRows = async () => (await dataSource.query(`SELECT count(*)::int AS left FROM outbox`))[0].left as number;
    while ((await jsm.streams.info(stream)).state.messages < expected.length || (await outboxRows()) > 0) {
      if (Date.now() > deadline) throw new Error('events were not all published and removed from the outbox in time');
      await new Promise((r) => setTimeout(r, 20));
    }

    const published: string[] = [];
    const { state } = await jsm.streams.info(stream);
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      published.push(decodeJson<DomainEvent>((await jsm.streams.getMessage(stream, { seq })).data).id);
    }
    expect(published).toEqual(expected);
  });
});
