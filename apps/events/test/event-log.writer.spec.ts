import { createLogger, openDatabase } from '@crm/common';
import { DomainEvent, EventType } from '@crm/contracts';
import { DeadEvents, MessagingMetrics, MessagingOptions, OutboxService, SequencedEvent } from '@crm/messaging';
import { dropNamespace, testEnv } from '@crm/test-support';
import { connect, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { eventsEntities, eventsMigrations } from '../src/database';
import { EventLogWriter } from '../src/log/event-log.writer';

/**
 * The log's append against real PostgreSQL: a batch lands in stream order, once, whatever the stream
 * hands it twice (a redelivered batch, an event a relay published again, the same id twice in one
 * batch, replicas appending the same batches at once), and the checkpoint follows the stream.
 */
describe('event log writer', () => {
  const env = testEnv();
  const namespace = env.CRM_NAMESPACE!;
  const options: MessagingOptions = {
    service: 'events' as MessagingOptions['service'],
    namespace,
    logger: createLogger('event-log-test', env.LOG_LEVEL!),
    databaseUrl: env.DATABASE_URL!,
    natsUrl: env.NATS_URL!,
    schema: 'events',
  };
  let dataSource: DataSource;
  let nc: NatsConnection;
  let metrics: MessagingMetrics;
  let writer: EventLogWriter;
  let counter = 0;

  const sequenced = (seq: number, event: DomainEvent = newEvent()): SequencedEvent => ({ seq, event });
  const newEvent = (extra: Partial<Pick<DomainEvent, 'actor' | 'via' | 'request_id'>> = {}): DomainEvent => ({
    id: `evt_${namespace}_${++counter}`,
    type: EventType.ContactCreated,
    occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString(),
    actor: { type: 'api_key', id: 'key_1' },
    via: 'api',
    request_id: `req_${counter}`,
    data: { contact_id: `con_${counter}`, email: `c${counter}@example.com` },
    ...extra,
  });
  const logged = async (): Promise<
    Array<{ id: string; position: string; actor: unknown; via: string | null; request_id: string | null; data: unknown; occurred_at: Date }>
  > => dataSource.query(`SELECT id, position::text, actor, via, request_id, data, occurred_at FROM events ORDER BY events.position`);
  const checkpoint = async (): Promise<number> => Number((await dataSource.query(`SELECT stream_seq::text AS seq FROM log_checkpoint`))[0].seq);
  const appendedTotal = async (): Promise<number> => (await metrics.registry.getSingleMetric('crm_event_log_appended_total')!.get()).values[0]?.value ?? 0;

  beforeAll(async () => {
    dataSource = await openDatabase({ url: options.databaseUrl, schema: options.schema, entities: eventsEntities, migrations: eventsMigrations, poolSize: 4 });
    nc = await connect({ servers: env.NATS_URL });
    metrics = new MessagingMetrics(dataSource);
    writer = new EventLogWriter(dataSource, nc, options, new DeadEvents(dataSource, options, metrics), metrics, new OutboxService(options));
  });

  beforeEach(async () => {
    await dataSource.query(`TRUNCATE events; UPDATE log_checkpoint SET stream_seq = 0`);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await nc?.close();
    await dropNamespace(env);
  });

  it('appends a batch in stream order with every field, and moves the checkpoint to its last sequence', async () => {
    const before = await appendedTotal();
    const batch = [sequenced(1), sequenced(2, newEvent({ actor: undefined, via: undefined, request_id: undefined })), sequenced(3)];
    await writer.append(batch);

    const rows = await logged();
    expect(rows.map((r) => r.id)).toEqual(batch.map((b) => b.event.id));
    const positions = rows.map((r) => BigInt(r.position));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
    expect(rows[0]).toMatchObject({ actor: batch[0].event.actor, via: 'api', request_id: batch[0].event.request_id, data: batch[0].event.data });
    expect(rows[0].occurred_at.toISOString()).toBe(batch[0].event.occurred_at);
    expect(rows[1]).toMatchObject({ actor: null, via: null, request_id: null });
    expect(await checkpoint()).toBe(3);
    expect((await appendedTotal()) - before).toBe(3);
  });

  it('skips what it already holds: a redelivered batch, a republished id, and one id twice in a batch', async () => {
    const first = [sequenced(1), sequenced(2)];
    await writer.append(first);
    await writer.append(first);
    expect(await checkpoint()).toBe(2);

    const again = newEvent();
    const before = await appendedTotal();
    // seq 2 is at the checkpoint, seq 3 carries an id the log has, seq 5 repeats seq 4's.
    await writer.append([first[1], sequenced(3, first[0].event), sequenced(4, again), sequenced(5, again)]);

    expect((await logged()).map((r) => r.id)).toEqual([first[0].event.id, first[1].event.id, again.id]);
    expect(await checkpoint()).toBe(5);
    expect((await appendedTotal()) - before).toBe(1);

    // A batch holding only known ids still moves the checkpoint, so the reader resumes after it.
    await writer.append([sequenced(6, again)]);
    expect(await checkpoint()).toBe(6);
    expect(await logged()).toHaveLength(3);
  });

  it('writes each event once, in stream order, when replicas append overlapping batches at once', async () => {
    const stream = Array.from({ length: 40 }, (_, i) => sequenced(i + 1));
    const replica = (from: number, size: number) => async () => {
      for (let i = from; i < stream.length; i += size) await writer.append(stream.slice(i, i + size));
    };
    // A replica reads the stream from the checkpoint it finds when it starts, as EventStreamReader does:
    // this one joins once the others have logged ten events, and reads on from wherever the log then is.
    const joining = async () => {
      while ((await checkpoint()) < 10) await new Promise((resolve) => setImmediate(resolve));
      await replica(await checkpoint(), 5)();
    };
    await Promise.all([replica(0, 3)(), replica(0, 7)(), joining()]);

    expect((await logged()).map((r) => r.id)).toEqual(stream.map((s) => s.event.id));
    expect(await checkpoint()).toBe(40);
  });
});
