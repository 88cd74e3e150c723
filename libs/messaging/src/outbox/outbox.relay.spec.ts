import { createLogger, DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, openDatabase } from '@crm/common';
import { DomainEvent, event, eventStreamName, EventType } from '@crm/contracts';
import { randomBytes } from 'crypto';
import { connect, JetStreamClient, JetStreamPublishOptions, NatsConnection, PubAck } from 'nats';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MessagingMetrics } from '../messaging.metrics';
import { MessagingOptions } from '../messaging.options';
import { decodeJson } from '../nats';
import { CreateOutbox1763800000000 } from './outbox.migration';
import { AddOutboxTraceContext1764200000000 } from './outbox-trace.migration';
import { AddOutboxPublished1766000000000, IndexOutboxPublished1766000000100 } from './outbox-published.migration';
import { OutboxLedger } from './outbox-ledger';
import { OutboxRelay } from './outbox.relay';
import { OutboxService } from './outbox.service';

/**
 * The outbox against real PostgreSQL and JetStream: events reach the stream in the order their
 * transactions committed, once each, with two relays (two replicas) competing for the same outbox,
 * and nothing is published for a transaction that rolled back. Then the relay's own logic against a fake
 * JetStream that acknowledges, holds, loses or times out each publish as a case needs.
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
    natsUrl: process.env.NATS_URL ?? DEFAULT_NATS_URL,
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
      migrations: [CreateOutbox1763800000000, AddOutboxTraceContext1764200000000, AddOutboxPublished1766000000000, IndexOutboxPublished1766000000100],
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
      const relay = new OutboxRelay(dataSource, nc, options, new MessagingMetrics(dataSource));
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
    const deadline = Date.now() + 120_000; // a safety net inside the jest timeout, not an expected speed
    // Published, and then marked in the outbox in the relay's own commit, which may come a moment later.
    const outboxRows = async () => (await dataSource.query(`SELECT count(*)::int AS left FROM outbox WHERE published_seq IS NULL`))[0].left as number;
    // The relay makes the stream on its first publish, which a loaded machine may not have reached yet.
    const messages = async () => (await jsm.streams.info(stream).catch(() => undefined))?.state.messages ?? 0;
    while ((await messages()) < expected.length || (await outboxRows()) > 0) {
      if (Date.now() > deadline) throw new Error('events were not all published and marked in the outbox in time');
      await new Promise((r) => setTimeout(r, 20));
    }

    const published: string[] = [];
    const { state } = await jsm.streams.info(stream);
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      published.push(decodeJson<DomainEvent>((await jsm.streams.getMessage(stream, { seq })).data).id);
    }
    expect(published).toEqual(expected);

    // Every row stays, marked with the stream's identity and the sequence JetStream stored it at.
    const created = (await jsm.streams.info(stream)).created;
    const marked: Array<{ event_id: string; published_stream: string; published_seq: string }> = await dataSource.query(
      `SELECT event_id, published_stream, published_seq::text FROM outbox ORDER BY seq`,
    );
    expect(marked.map((r) => r.event_id)).toEqual(expected);
    expect(marked.map((r) => [r.published_stream, Number(r.published_seq)])).toEqual(expected.map((_, i) => [created, state.first_seq + i]));

    // They go once both the log and the webhook intake have read past them, on that stream, and no sooner.
    const ledger = new OutboxLedger(dataSource, connections[0], options, relays[0], new MessagingMetrics(dataSource));
    const left = async () => (await dataSource.query(`SELECT count(*)::int AS n FROM outbox`))[0].n as number;
    const half = state.first_seq + Math.floor(expected.length / 2) - 1;
    ledger.heard({ consumer: 'event-log', stream: created, seq: state.last_seq });
    await ledger.prune();
    expect(await left()).toBe(expected.length);
    ledger.heard({ consumer: 'webhook-intake', stream: 'another stream', seq: state.last_seq });
    await ledger.prune();
    expect(await left()).toBe(expected.length);
    ledger.heard({ consumer: 'webhook-intake', stream: created, seq: half });
    await ledger.prune();
    expect(await left()).toBe(expected.length - (half - state.first_seq + 1));
    ledger.heard({ consumer: 'webhook-intake', stream: created, seq: state.last_seq });
    await ledger.prune();
    expect(await left()).toBe(0);
    await ledger.onApplicationShutdown();
    await Promise.all(relays.splice(0).map((r) => r.onApplicationShutdown()));
  });

  describe('against a fake JetStream', () => {
    const outbox = new OutboxService(options);
    let stream: FakeStream;
    let metrics: MessagingMetrics;

    beforeEach(async () => {
      expect((await dataSource.query(`SELECT count(*)::int AS n FROM outbox`))[0].n).toBe(0);
      stream = new FakeStream();
      metrics = new MessagingMetrics(dataSource);
    });

    afterEach(async () => {
      // A test that failed while an answer was held leaves no relay waiting on it at shutdown.
      stream.release();
      await Promise.all(relays.splice(0).map((r) => r.onApplicationShutdown()));
      await dataSource.query(`DELETE FROM outbox`);
    });

    /** Commits events for the contacts named, one transaction, in that order; returns their ids. */
    async function commit(contacts: string[]): Promise<string[]> {
      const events = await dataSource.transaction((m) =>
        outbox.appendMany(
          m,
          contacts.map((contact) => event(EventType.ContactUpdated, { contact_id: contact, changed: ['first_name'], previous: {}, current: {} })),
        ),
      );
      return events.map((e) => e.id);
    }

    async function start(): Promise<OutboxRelay> {
      const nc = await connect({ servers: options.natsUrl });
      connections.push(nc);
      const relay = new FakeNatsRelay(dataSource, nc, options, metrics, () => stream.connection());
      relays.push(relay);
      await relay.onApplicationBootstrap();
      return relay;
    }

    const outboxEmpty = async () =>
      (await dataSource.query(`SELECT count(*)::int AS n FROM outbox WHERE published_seq IS NULL`))[0].n === 0 ? true : undefined;
    const breaks = async () => (await metrics.outboxOrderBreaks.get()).values[0]?.value ?? 0;

    /**
     * Commits a marker event (of a contact of its own) while the relay waits on a held answer, and waits
     * until the relay has been woken after that commit (by the row's notification or its poll), so what
     * it had not sent by then it did not send for lack of a chance. Returns the marker's id.
     */
    async function wokenByMarker(relay: OutboxRelay): Promise<string> {
      const kicks = jest.spyOn(relay, 'kick');
      const [marker] = await commit(['con_marker']);
      const seen = kicks.mock.calls.length;
      await until(async () => (kicks.mock.calls.length > seen ? true : undefined));
      kicks.mockRestore();
      return marker;
    }

    it('sends a whole window, two events of a contact included, before any acknowledgement but the first', async () => {
      const ids = await commit(['con_a', 'con_a', 'con_b', 'con_b', 'con_c', 'con_a']);
      // The first publish on a new connection is answered; every later one is held until all have been sent.
      stream.policy = (n) => (n === 0 ? 'store' : 'hold');
      await start();
      await until(async () => (stream.held.length === ids.length - 1 ? true : undefined));
      expect(stream.sent).toEqual(ids);
      stream.release();
      await until(outboxEmpty);
      expect(stream.stored).toEqual(ids);
      expect(stream.connections).toBe(1);
    });

    it('stops at a failure, keeps what was acknowledged, and starts again at the first row not acknowledged', async () => {
      const ids = await commit(['con_a', 'con_b', 'con_c', 'con_d', 'con_e', 'con_f']);
      // The fourth publish times out after JetStream stored it; the next pass republishes from it.
      stream.policy = (n) => (n === 3 ? 'stored, timed out' : 'store');
      await start();
      await until(outboxEmpty);
      expect(stream.sent).toEqual([...ids, ids[3]]);
      expect(stream.stored).toEqual(ids);
      expect(stream.duplicates).toEqual([ids[3]]);
    });

    it('after a failure sends the first row left alone and the rest only after its acknowledgement', async () => {
      const ids = await commit(['con_a', 'con_b', 'con_c', 'con_d']);
      stream.policy = (n) => (n === 1 || n === 2 ? 'lose' : n === 4 ? 'hold' : 'store');
      const relay = await start();
      // The retry of the second row is held: nothing is sent behind it until it is answered, not even
      // once the relay has been woken by a row committed after it (the marker).
      await until(async () => (stream.held.length === 1 ? true : undefined));
      const marker = await wokenByMarker(relay);
      expect(stream.sent).toEqual([...ids, ids[1]]);
      stream.release();
      await until(outboxEmpty);
      expect(stream.sent).toEqual([...ids, ids[1], ids[2], marker]);
      expect(stream.stored).toEqual([ids[0], ids[3], ids[1], ids[2], marker]);
    });

    it('counts an event stored after a later event of its resource, and nothing else', async () => {
      // JetStream loses the first event of con_a and stores the second: the republish shows it.
      const ids = await commit(['con_p', 'con_a', 'con_b', 'con_a', 'con_c']);
      stream.policy = (n, id) => (id === ids[1] && !stream.sent.includes(id) ? 'lose' : 'store');
      const error = jest.spyOn(options.logger, 'error');
      const relay = await start();
      await until(outboxEmpty);
      expect(stream.stored).toEqual([ids[0], ids[2], ids[3], ids[4], ids[1]]);
      expect(await breaks()).toBe(1);
      expect(error).toHaveBeenCalledWith(
        expect.objectContaining({ event_id: ids[1], type: EventType.ContactUpdated }),
        expect.stringContaining('after a later event'),
      );
      error.mockRestore();
      await relay.onApplicationShutdown();

      // Stored before the timeout hid it: the republish is a duplicate, in order.
      const stored = await commit(['con_p', 'con_a', 'con_b', 'con_a']);
      stream.policy = (n, id) => (id === stored[1] && !stream.sent.includes(id) ? 'stored, timed out' : 'store');
      await start();
      await until(outboxEmpty);
      expect(stream.duplicates).toEqual([stored[1]]);
      // Lost with no later event of its resource acknowledged: nothing out of order. The policy is set
      // before the commit, so the running relay cannot publish the rows before it applies.
      const before = stream.sent.length;
      let alone: string[] = [];
      stream.policy = (n, id) => (id === alone[1] && stream.sent.indexOf(id, before) === -1 ? 'lose' : 'store');
      alone = await commit(['con_p', 'con_e', 'con_f', 'con_g']);
      await until(outboxEmpty);
      // The path ran: the second row was lost once and sent again.
      expect(stream.sent.slice(before).filter((id) => id === alone[1])).toHaveLength(2);
      expect(await breaks()).toBe(1);
    });

    it("connected to a cluster, sends a resource's next event only after its previous one is acknowledged", async () => {
      const ids = await commit(['con_p', 'con_a', 'con_a', 'con_b']);
      stream.cluster = 'crm-nats';
      // After the probe, con_a's first event is held: its second, and con_b's behind it, wait for the answer.
      stream.policy = (n) => (n === 1 ? 'hold' : 'store');
      const relay = await start();
      await until(async () => (stream.held.length === 1 ? true : undefined));
      const marker = await wokenByMarker(relay);
      expect(stream.sent).toEqual(ids.slice(0, 2));
      stream.release();
      await until(outboxEmpty);
      expect(stream.sent).toEqual([...ids, marker]);
      expect(stream.stored).toEqual([...ids, marker]);
    });

    it('makes a new connection once its connection closed, and never resends on the old one', async () => {
      const ids = await commit(['con_a', 'con_a', 'con_b', 'con_b']);
      stream.policy = (n) => (n === 0 ? 'store' : n === 2 ? 'close' : 'store');
      await start();
      await until(outboxEmpty);
      expect(stream.connections).toBe(2);
      expect(stream.stored).toEqual(ids);
    });
  });
});

/** Waits for `check` to return something; the deadline is for a hang, not a speed. */
async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('the condition did not come true in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What the fake does with the n-th publish it sees. */
type Outcome = 'store' | 'hold' | 'lose' | 'stored, timed out' | 'close';

/**
 * A stream that keeps message ids in the order it stores them and answers a repeat of one as a
 * duplicate, behind connections that close, failing whatever they have not answered.
 */
class FakeStream {
  policy: (n: number, id: string) => Outcome = () => 'store';
  readonly sent: string[] = [];
  readonly stored: string[] = [];
  readonly duplicates: string[] = [];
  held: Array<() => void> = [];
  connections = 0;
  /** The cluster the connection's server names, if any. */
  cluster?: string;

  release(): void {
    const held = this.held;
    this.held = [];
    held.forEach((answer) => answer());
  }

  private ack(id: string): PubAck {
    const duplicate = this.stored.includes(id);
    if (duplicate) this.duplicates.push(id);
    else this.stored.push(id);
    return { stream: 'FAKE', seq: this.stored.indexOf(id) + 1, duplicate } as PubAck;
  }

  connection(): NatsConnection {
    this.connections++;
    let closed = false;
    const unanswered = new Set<(err: Error) => void>();
    const js = {
      publish: (_subject: string, _data: Uint8Array, opts: Partial<JetStreamPublishOptions>): Promise<PubAck> => {
        if (closed) return Promise.reject(new Error('CONNECTION_CLOSED'));
        const id = opts.msgID!;
        const outcome = this.policy(this.sent.length, id);
        this.sent.push(id);
        // JetStream stores what it receives in the order received, and answers later.
        const ack = outcome === 'lose' || outcome === 'close' ? undefined : this.ack(id);
        return new Promise<PubAck>((resolve, reject) => {
          unanswered.add(reject);
          const settle = (answer: () => void) => {
            if (unanswered.delete(reject)) answer();
          };
          if (outcome === 'store') setImmediate(() => settle(() => resolve(ack!)));
          else if (outcome === 'hold') this.held.push(() => settle(() => resolve(ack!)));
          else if (outcome === 'stored, timed out') setTimeout(() => settle(() => reject(new Error('TIMEOUT'))), 50);
          else if (outcome === 'lose') setImmediate(() => settle(() => reject(new Error('503'))));
          else {
            // The socket dies: this message never arrives, and whatever is unanswered fails.
            closed = true;
            const failing = [...unanswered];
            unanswered.clear();
            setImmediate(() => failing.forEach((fail) => fail(new Error('TIMEOUT'))));
          }
        });
      },
    } as unknown as JetStreamClient;
    return {
      jetstream: () => js,
      isClosed: () => closed,
      close: async () => void (closed = true),
      info: { cluster: this.cluster },
    } as unknown as NatsConnection;
  }
}

/** The relay publishing over fake connections. */
class FakeNatsRelay extends OutboxRelay {
  constructor(
    dataSource: DataSource,
    nc: NatsConnection,
    options: MessagingOptions,
    metrics: MessagingMetrics,
    private readonly fake: () => NatsConnection,
  ) {
    super(dataSource, nc, options, metrics);
  }

  protected override connect(): Promise<NatsConnection> {
    return Promise.resolve(this.fake());
  }
}
