import { eventually, startStack, TestStack } from '@crm/test-support';
import { EventRetention } from '../src/log/event-retention';

/**
 * The log's retention sweep, driven through the running stack: events recorded before
 * EVENTS_RETENTION_DAYS go, younger ones stay, in batches of at most EVENTS_PRUNE_BATCH_SIZE, and a poller
 * whose cursor points into the pruned history is told so with `410 cursor_expired` (docs/events.md,
 * "Retention"). The events' age is set in the database, since a day cannot pass in a test; the sweep itself
 * is the service's own, on its own timer.
 */
describe('event log retention', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({
      services: ['events'],
      env: { EVENTS_RETENTION_DAYS: '1', EVENTS_PRUNE_INTERVAL_MS: '1000', EVENTS_PRUNE_BATCH_SIZE: '3' },
    });
  });
  afterAll(() => stack?.stop());

  const keyEvents = async (): Promise<any[]> => stack.api.listAll('/events?type=api_key.created');
  const db = () => stack.services.events!.dataSource;

  it('prunes events past the retention period, keeps the rest, and answers 410 cursor_expired to a cursor into pruned history', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await stack.api.post('/apikeys', { name: `retention-${i}`, scope: 'read' });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    const logged = await eventually(async () => {
      const events = (await keyEvents()).filter((e) => ids.includes(e.data.key_id));
      return events.length === ids.length ? events : undefined;
    });
    // A poller that read up to the first of these events and stopped there.
    const before = await keyEvents();
    const upTo = before.findIndex((e) => e.id === logged[0].id) + 1;
    const read = await stack.api.get(`/events?type=api_key.created&limit=${upTo}`);
    expect(read.body.data.at(-1).id).toBe(logged[0].id);
    const cursor = read.body.next_cursor;

    // Every event up to the second of these is past the window (the log is pruned from its start).
    const old = logged.slice(0, 2).map((e) => e.id);
    await db().query(`UPDATE events SET recorded_at = now() - interval '3 days' WHERE position <= (SELECT position FROM events WHERE id = $1)`, [logged[1].id]);

    const kept = await eventually(async () => {
      const events = await keyEvents();
      return events.some((e) => old.includes(e.id)) ? undefined : events;
    });
    expect(kept.map((e) => e.id)).toEqual(logged.slice(2).map((e) => e.id));

    // The poller's cursor is before an event the sweep deleted: it would resume past it, unknowing.
    for (const res of [
      await stack.api.get(`/events?type=api_key.created&cursor=${cursor}`),
      await stack.api.post('/events/query', { cursor, type: 'api_key.created' }),
    ]) {
      expect(res.status).toBe(410);
      expect(res.body.error).toMatchObject({ code: 'cursor_expired', details: [{ field: 'cursor', code: 'cursor_expired' }] });
    }
    // Starting again without a cursor reads from the oldest event kept, and its cursor goes on working.
    const fresh = await stack.api.get(`/events?type=api_key.created&limit=1`);
    expect(fresh.status).toBe(200);
    expect(fresh.body.data[0].id).toBe(kept[0].id);
    const resumed = await stack.api.get(`/events?type=api_key.created&cursor=${fresh.body.next_cursor}`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.map((e: any) => e.id)).toEqual(kept.slice(1).map((e) => e.id));
  });

  it("deletes exactly the events past the window, from the log's start, a bounded batch at a time", async () => {
    const job = stack.services.events!.app.get(EventRetention);
    const batchesBefore = job.batches;
    // Everything logged so far is past the window; then 30 events: the first 20 past it, then young ones
    // with one old event among them (#25), which stays while a younger event is before it.
    await db().query(`UPDATE events SET recorded_at = now() - interval '3 days'`);
    const inserted: Array<{ id: string; position: string }> = await db().query(
      `INSERT INTO events (position, id, type, occurred_at, data, recorded_at)
       SELECT nextval('event_position'), 'evt_batch_' || lpad(g::text, 3, '0'), 'test.retention', now(), '{}',
              CASE WHEN g <= 20 OR g = 25 THEN now() - interval '3 days' ELSE now() END
       FROM generate_series(1, 30) g
       RETURNING id, position::text`,
    );
    const left = async () => (await db().query(`SELECT id FROM events ORDER BY position`)).map((r: { id: string }) => r.id);
    await eventually(async () => ((await left()).length === 10 ? true : undefined), 60_000);
    expect(await left()).toEqual(inserted.slice(20).map((r) => r.id));
    // At least 20 events, at most 3 a statement: at least 7 batches.
    expect(job.batches - batchesBefore).toBeGreaterThanOrEqual(7);
    // Everything up to the last old event before the first young one is gone, and the log says so.
    const [{ pruned }] = await db().query(`SELECT pruned_through::text AS pruned FROM log_checkpoint`);
    expect(pruned).toBe(inserted[19].position);
  });
});
