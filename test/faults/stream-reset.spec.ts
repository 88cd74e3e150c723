import { eventStreamName, streamCheckpointSubject } from '@crm/contracts';
import { randomUUID } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { ApiClient, eventually } from '../support/api-client';
import { FaultStack, startFaultStack } from '../support/fault-stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * The event stream deleted and made again under a steady write load (docs/operations.md, "Stream reset"):
 * once with the events service reading, once with it stopped through the reset. Each writer creates
 * contacts and updates a contact of its own with a counter, each write with an Idempotency-Key and retried
 * until acknowledged. Afterwards the log holds every acknowledged write's event exactly once, each writer's
 * updates in the order they were made, the webhook received each of those events once, no stream.gap was
 * recorded (the outboxes held everything the lost stream had), and both readers counted the reset.
 */
const WRITERS = 3;
const OP_DEADLINE_MS = 120_000;
/** Writes each writer has acknowledged after the stream was deleted, before the load stops: recovery happens under load. */
const WRITES_AFTER = 15;

interface Written {
  creates: string[];
  /** Each writer's contact and the values its updates set, in order. */
  updates: Array<{ contact: string; values: string[] }>;
}

class Load {
  private running = true;
  private readonly workers: Promise<void>[];
  readonly done: number[] = Array.from({ length: WRITERS }, () => 0);

  constructor(
    private readonly api: ApiClient,
    private readonly written: Written,
  ) {
    this.workers = written.updates.map((_, i) => this.work(i));
  }

  private async write(method: string, path: string, body: unknown): Promise<any> {
    const headers = { 'Idempotency-Key': randomUUID() };
    const deadline = Date.now() + OP_DEADLINE_MS;
    for (;;) {
      const res = await this.api.request(method, path, body, { headers }).catch(() => undefined);
      if (res && res.status < 300) return res.body;
      const retryable = !res || res.status >= 500 || res.status === 429 || (res.status === 409 && /in progress/.test(res.body?.error?.message));
      if (!retryable) throw new Error(`${method} ${path} answered ${res!.status}: ${res!.text.slice(0, 200)}`);
      if (Date.now() > deadline) throw new Error(`${method} ${path} was not acknowledged within ${OP_DEADLINE_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async work(writer: number): Promise<void> {
    const mine = this.written.updates[writer];
    while (this.running) {
      const created = await this.write('POST', '/contacts', { email: `reset-${writer}-${randomUUID().slice(0, 12)}@example.com` });
      this.written.creates.push(created.data.id);
      const value = `u${String(mine.values.length + 1).padStart(5, '0')}`;
      await this.write('PATCH', `/contacts/${mine.contact}`, { first_name: value });
      mine.values.push(value);
      this.done[writer]++;
    }
  }

  /** Resolves once every writer has completed `count` more rounds than when called. */
  async advance(count: number): Promise<void> {
    const target = this.done.map((n) => n + count);
    await eventually(async () => (this.done.every((n, i) => n >= target[i]) ? true : undefined), OP_DEADLINE_MS * 2, 50);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }
}

describe('fault: the event stream deleted and made again under load', () => {
  let stack: FaultStack;
  let receiver: Receiver;
  let nc: NatsConnection;
  let stream: string;
  const written: Written = { creates: [], updates: [] };

  beforeAll(async () => {
    stack = await startFaultStack({
      WEBHOOKS_ALLOW_INSECURE: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_RETRY_SCHEDULE_MS: '200,500,1000,2000,2000,2000,2000,2000',
      WEBHOOKS_RETRY_JITTER_PERCENT: '0',
    });
    receiver = await Receiver.start();
    expect(
      (await stack.api.post('/webhooks', { name: 'stream-reset', url: receiver.url, event_types: ['contact.created', 'contact.updated', 'stream.gap'] }))
        .status,
    ).toBe(201);
    for (let w = 0; w < WRITERS; w++) {
      const res = await stack.api.post('/contacts', { email: `reset-owner-${w}-${randomUUID().slice(0, 8)}@example.com` });
      expect(res.status).toBe(201);
      written.creates.push(res.body.data.id);
      written.updates.push({ contact: res.body.data.id, values: [] });
    }
    nc = await connect({ servers: stack.nats.url });
    stream = eventStreamName(stack.env.CRM_NAMESPACE!);
  }, 180_000);

  afterAll(async () => {
    await nc?.close();
    await receiver?.close();
    await stack?.stop();
  });

  /** A counter or gauge of a process's /metrics, summed over the series whose labels include `labels`. */
  async function metric(process: 'events' | 'webhooks' | 'contacts' | 'deals', name: string, labels: string): Promise<number> {
    const text = await (await fetch(stack.processes[process].healthUrl.replace(/\/health$/, '/metrics'))).text();
    return text
      .split('\n')
      .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labels))
      .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  }

  async function deleteStream(): Promise<string> {
    const jsm = await nc.jetstreamManager();
    const { created } = await jsm.streams.info(stream);
    await jsm.streams.delete(stream);
    return created;
  }

  /** The stream exists again, made by a relay that found it gone, under another identity. */
  async function madeAgain(old: string): Promise<void> {
    const jsm = await nc.jetstreamManager();
    await eventually(async () => ((await jsm.streams.info(stream).catch(() => undefined))?.created !== old ? true : undefined), OP_DEADLINE_MS, 50);
    await eventually(async () => ((await jsm.streams.info(stream).catch(() => undefined))?.created ? true : undefined), OP_DEADLINE_MS, 50);
  }

  /**
   * Once every acknowledged write is in the log: each exactly once, each writer's updates in order, each
   * load event delivered to the webhook once, and no stream.gap.
   */
  async function checkLog(): Promise<void> {
    const created = new Set(written.creates);
    const lastValue = new Map(written.updates.map((u) => [u.contact, u.values[u.values.length - 1]]));
    const events = await eventually(
      async () => {
        const all = (await stack.api.listAll('/events')) as Array<{ id: string; type: string; data: Record<string, any> }>;
        const logged = new Set(all.filter((e) => e.type === 'contact.created').map((e) => e.data.contact_id));
        const updated = new Set(all.filter((e) => e.type === 'contact.updated').map((e) => `${e.data.contact_id} ${e.data.current?.first_name}`));
        const complete = [...created].every((id) => logged.has(id)) && [...lastValue].every(([c, v]) => updated.has(`${c} ${v}`));
        return complete ? all : undefined;
      },
      OP_DEADLINE_MS * 2,
      500,
    );
    const createdCounts = new Map<string, number>();
    for (const e of events.filter((e) => e.type === 'contact.created')) createdCounts.set(e.data.contact_id, (createdCounts.get(e.data.contact_id) ?? 0) + 1);
    expect([...created].filter((id) => createdCounts.get(id) !== 1)).toEqual([]);
    for (const { contact, values } of written.updates) {
      const logged = events.filter((e) => e.type === 'contact.updated' && e.data.contact_id === contact).map((e) => e.data.current.first_name);
      expect({ contact, logged }).toEqual({ contact, logged: values });
    }
    expect(events.filter((e) => e.type === 'stream.gap')).toEqual([]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    const loadIds = events.filter((e) => e.type === 'contact.created' || e.type === 'contact.updated').map((e) => e.id);
    await eventually(
      async () => {
        const received = new Set(receiver.ids());
        return loadIds.every((id) => received.has(id)) ? true : undefined;
      },
      OP_DEADLINE_MS,
      500,
    );
    const deliveries = new Map<string, number>();
    for (const id of receiver.ids()) deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
    expect(loadIds.filter((id) => deliveries.get(id) !== 1)).toEqual([]);
  }

  it('with the events service running: both readers notice, recover from the outboxes, and lose, repeat and reorder nothing', async () => {
    const load = new Load(stack.api, written);
    try {
      await load.advance(3);
      const old = await deleteStream();
      await madeAgain(old);
      await load.advance(WRITES_AFTER);
    } finally {
      await load.stop();
    }
    await checkLog();
    // The reset was noticed and counted by both readers, and both have finished recovering.
    expect(await metric('events', 'crm_stream_resets_total', 'consumer="event-log"')).toBeGreaterThanOrEqual(1);
    expect(await metric('webhooks', 'crm_stream_resets_total', 'consumer="webhook-intake"')).toBeGreaterThanOrEqual(1);
    expect(await metric('events', 'crm_stream_recovering', 'consumer="event-log"')).toBe(0);
  }, 600_000);

  it('with the events service stopped through the reset: it notices at its start and recovers the same way', async () => {
    const resetsBefore = await metric('webhooks', 'crm_stream_resets_total', 'consumer="webhook-intake"');
    const load = new Load(stack.api, written);
    try {
      await load.advance(3);
      await stack.processes.events.stop();
      await load.advance(3);
      const old = await deleteStream();
      await madeAgain(old);
      await load.advance(WRITES_AFTER);
      await stack.start('events');
      await load.advance(3);
    } finally {
      await load.stop();
    }
    await checkLog();
    expect(await metric('events', 'crm_stream_resets_total', 'consumer="event-log",reason="replaced"')).toBe(1);
    expect(await metric('webhooks', 'crm_stream_resets_total', 'consumer="webhook-intake"')).toBeGreaterThan(resetsBefore);
  }, 600_000);

  it('with the events service down while the stream dropped the events it had not read (as past max_age): it recovers them from the outboxes', async () => {
    const load = new Load(stack.api, written);
    try {
      await load.advance(3);
      await stack.processes.events.stop();
      await load.advance(5);
      // What max_age does to a reader that is away too long: the events after its checkpoint are gone from
      // the stream, which keeps its identity and its sequence numbers.
      await (await nc.jetstreamManager()).streams.purge(stream);
      await load.advance(3);
      await stack.start('events');
      await load.advance(3);
    } finally {
      await load.stop();
    }
    await checkLog();
    expect(await metric('events', 'crm_stream_resets_total', 'consumer="event-log",reason="truncated"')).toBe(1);
    expect(await metric('events', 'crm_stream_gap_events_total', 'consumer="event-log"')).toBe(0);
  }, 600_000);

  it("the services' own durable consumers resume on the stream made again: deal activity, contact and deal clean-ups", async () => {
    const stages = [
      { name: 'Open', type: 'open' },
      { name: 'Won', type: 'won' },
    ];
    const pipeline = (await stack.api.post('/pipelines', { name: `reset-${randomUUID().slice(0, 8)}`, stages })).body.data;
    const deal = async (body: Record<string, unknown> = {}) => {
      const res = await stack.api.post('/deals', { name: 'reset', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, ...body });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const contact = async () => (await stack.api.post('/contacts', { email: `reset-link-${randomUUID().slice(0, 8)}@example.com` })).body.data.id as string;
    const [owner, holder] = [await contact(), await contact()];
    const [followed, linked, doomed] = [await deal(), await deal({ contact_id: owner }), await deal()];
    const activity = (await stack.api.post('/activities', { type: 'call', deal_id: doomed, contact_id: holder })).body.data.id as string;
    // Both consumers are on the stream and caught up before it goes.
    const before = new Date(Date.now() - 5 * 86_400_000).toISOString();
    expect((await stack.api.post('/activities', { type: 'note', deal_id: followed, occurred_at: before })).status).toBe(201);
    await eventually(async () => ((await stack.api.get(`/deals/${followed}`)).body.data.last_activity_at === before ? true : undefined), OP_DEADLINE_MS);
    const resetsBefore = {
      deals: await metric('deals', 'crm_stream_resets_total', 'consumer="deals-activity"'),
      contacts: await metric('contacts', 'crm_stream_resets_total', 'consumer="contacts-deal-links"'),
    };

    const old = await deleteStream();
    // A write makes the relays find the stream gone and make it again.
    const after = new Date(Date.now() - 2 * 86_400_000).toISOString();
    expect((await stack.api.post('/activities', { type: 'note', deal_id: followed, occurred_at: after })).status).toBe(201);
    await madeAgain(old);
    expect((await stack.api.delete(`/contacts/${owner}`)).status).toBe(204);
    expect((await stack.api.delete(`/deals/${doomed}`)).status).toBe(204);

    // deals-activity: the activity feeds the deal's inactivity clock, the deleted contact is unlinked.
    await eventually(async () => ((await stack.api.get(`/deals/${followed}`)).body.data.last_activity_at === after ? true : undefined), OP_DEADLINE_MS);
    await eventually(async () => ((await stack.api.get(`/deals/${linked}`)).body.data.contact_id === null ? true : undefined), OP_DEADLINE_MS);
    // contacts-deal-links: the deleted deal's activity loses it (its contact still holds it).
    await eventually(async () => ((await stack.api.get(`/activities/${activity}`)).body.data.deal_id === null ? true : undefined), OP_DEADLINE_MS);
    // Each noticed the reset, counted it, and is done recovering.
    expect(await metric('deals', 'crm_stream_resets_total', 'consumer="deals-activity"')).toBeGreaterThan(resetsBefore.deals);
    expect(await metric('contacts', 'crm_stream_resets_total', 'consumer="contacts-deal-links"')).toBeGreaterThan(resetsBefore.contacts);
    expect(await metric('deals', 'crm_stream_recovering', 'consumer="deals-activity"')).toBe(0);
  }, 600_000);

  it('a durable consumer stopped through the reset handles, at its start, what the outboxes held of the lost stream', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: `reset-${randomUUID().slice(0, 8)}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const deal = (await stack.api.post('/deals', { name: 'reset', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data.id as string;
    const first = new Date(Date.now() - 6 * 86_400_000).toISOString();
    const activity = (await stack.api.post('/activities', { type: 'note', deal_id: deal, occurred_at: first })).body.data.id as string;
    await eventually(async () => ((await stack.api.get(`/deals/${deal}`)).body.data.last_activity_at === first ? true : undefined), OP_DEADLINE_MS);
    // The log stopped too, so the contacts outbox keeps the activity's event: it is in no stream once the old one goes.
    await stack.processes.deals.stop();
    await stack.processes.events.stop();
    try {
      const when = new Date(Date.now() - 4 * 86_400_000).toISOString();
      expect((await stack.api.patch(`/activities/${activity}`, { occurred_at: when })).status).toBe(200);
      const old = await deleteStream();
      // Another write makes a relay find the stream gone and make it again.
      await stack.api.post('/contacts', { email: `reset-late-${randomUUID().slice(0, 8)}@example.com` });
      await madeAgain(old);
      await stack.start('deals');
      await eventually(async () => ((await stack.api.get(`/deals/${deal}`)).body.data.last_activity_at === when ? true : undefined), OP_DEADLINE_MS);
    } finally {
      await stack.start('events');
    }
    // The log's own recovery from the reset (counted by the process started after it) is over before the next
    // test stops it again.
    await eventually(
      async () =>
        (await metric('events', 'crm_stream_resets_total', 'consumer="event-log"')) > 0 &&
        (await metric('events', 'crm_stream_recovering', 'consumer="event-log"')) === 0
          ? true
          : undefined,
      OP_DEADLINE_MS,
    );
  }, 600_000);

  it('keeps an event in the outbox for a durable consumer that is down after the log and the webhook intake read it, and the consumer handles it after a reset', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: `reset-${randomUUID().slice(0, 8)}`, stages: [{ name: 'Open', type: 'open' }] })).body.data;
    const deal = (await stack.api.post('/deals', { name: 'kept', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data.id as string;
    const first = new Date(Date.now() - 6 * 86_400_000).toISOString();
    const activity = (await stack.api.post('/activities', { type: 'note', deal_id: deal, occurred_at: first })).body.data.id as string;
    await eventually(async () => ((await stack.api.get(`/deals/${deal}`)).body.data.last_activity_at === first ? true : undefined), OP_DEADLINE_MS);
    const db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    // Every checkpoint the log and the webhook intake announce to the producing services.
    const announced = new Map<string, number>();
    const checkpoints = nc.subscribe(streamCheckpointSubject(stack.env.CRM_NAMESPACE!), {
      callback: (err, msg) => {
        if (err) return;
        const { consumer, seq } = JSON.parse(new TextDecoder().decode(msg.data)) as { consumer: string; seq: number };
        announced.set(consumer, Math.max(announced.get(consumer) ?? 0, seq));
      },
    });
    // deals-activity, the deals service's durable consumer of activity events, is down; the log and the intake are not.
    await stack.processes.deals.stop();
    let dealsStarted = false;
    try {
      const when = new Date(Date.now() - 4 * 86_400_000).toISOString();
      expect((await stack.api.patch(`/activities/${activity}`, { occurred_at: when })).status).toBe(200);
      const row = `SELECT published_seq::int AS seq FROM contacts.outbox
                   WHERE payload->>'type' = 'activity.updated' AND payload->'data'->>'activity_id' = $1 AND published_seq IS NOT NULL`;
      const seq = await eventually(async () => (await db.query<{ seq: number }>(row, [activity])).rows[0]?.seq, OP_DEADLINE_MS);
      // Both readers said they passed it; then two prunes of the contacts outbox ran, the second begun after that.
      await eventually(async () => (['event-log', 'webhook-intake'].every((c) => (announced.get(c) ?? 0) >= seq) ? true : undefined), OP_DEADLINE_MS);
      const prunes = await metric('contacts', 'crm_outbox_prunes_total', '');
      await eventually(async () => ((await metric('contacts', 'crm_outbox_prunes_total', '')) >= prunes + 2 ? true : undefined), OP_DEADLINE_MS);
      expect((await db.query(row, [activity])).rowCount).toBe(1);

      const old = await deleteStream();
      await stack.api.post('/contacts', { email: `reset-kept-${randomUUID().slice(0, 8)}@example.com` });
      await madeAgain(old);
      await stack.start('deals');
      dealsStarted = true;
      await eventually(async () => ((await stack.api.get(`/deals/${deal}`)).body.data.last_activity_at === when ? true : undefined), OP_DEADLINE_MS);
    } finally {
      checkpoints.unsubscribe();
      await db.end();
      if (!dealsStarted) await stack.start('deals');
    }
    // The readers' recovery from this reset is over before the next test.
    await eventually(async () => ((await metric('events', 'crm_stream_recovering', 'consumer="event-log"')) === 0 ? true : undefined), OP_DEADLINE_MS);
  }, 600_000);

  it('records a stream.gap, seen by pollers and webhooks, for events gone from the stream and from every outbox', async () => {
    const db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    try {
      await stack.processes.events.stop();
      const lost: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await stack.api.post('/contacts', { email: `reset-lost-${i}-${randomUUID().slice(0, 8)}@example.com` });
        expect(res.status).toBe(201);
        lost.push(res.body.data.id);
      }
      // Published (marked with their stream sequence), then gone from the outbox as an earlier version, which
      // deleted rows once JetStream had them, would have left it; then gone from the stream too.
      const rows = async () =>
        (await db.query(`SELECT published_seq FROM contacts.outbox WHERE type = 'contact.created' AND payload->'data'->>'contact_id' = ANY($1)`, [lost])).rows;
      await eventually(
        async () => ((await rows()).length === 5 && (await rows()).every((r) => r.published_seq !== null) ? true : undefined),
        OP_DEADLINE_MS,
        50,
      );
      await db.query(`DELETE FROM contacts.outbox WHERE type = 'contact.created' AND payload->'data'->>'contact_id' = ANY($1)`, [lost]);
      await (await nc.jetstreamManager()).streams.purge(stream);
      await stack.start('events');

      const gap = await eventually(
        async () => (await stack.api.listAll('/events?type=stream.gap')).find((e: { data: { missing: number } }) => e.data.missing > 0),
        OP_DEADLINE_MS,
      );
      expect(gap.data).toMatchObject({ reason: 'truncated', missing: 5 });
      expect(gap.data.to_seq - gap.data.from_seq + 1).toBeGreaterThanOrEqual(5);
      const logged = new Set((await stack.api.listAll('/events?type=contact.created')).map((e: { data: { contact_id: string } }) => e.data.contact_id));
      expect(lost.filter((id) => logged.has(id))).toEqual([]);
      expect(await metric('events', 'crm_stream_gap_events_total', 'consumer="event-log"')).toBe(5);
      // The marker reaches webhook subscribers too, with the id the log shows.
      await eventually(async () => (receiver.ids().includes(gap.id) ? true : undefined), OP_DEADLINE_MS);
    } finally {
      await db.end();
    }
  }, 600_000);
});
