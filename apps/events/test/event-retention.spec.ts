import { eventually, startStack, TestStack } from '@crm/test-support';

/**
 * The log's retention sweep, driven through the running stack: events recorded before
 * EVENTS_RETENTION_DAYS go, younger ones stay, and a poller whose cursor points into the pruned history
 * resumes at the oldest event still kept (docs/events.md). The events' age is set in the database, since
 * a day cannot pass in a test; the sweep itself is the service's own, on its own timer.
 */
describe('event log retention', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['events'], env: { EVENTS_RETENTION_DAYS: '1', EVENTS_PRUNE_INTERVAL_MS: '1000' } });
  });
  afterAll(() => stack?.stop());

  const keyEvents = async (): Promise<any[]> => stack.api.listAll('/events?type=api_key.created');

  it('prunes events past the retention period, keeps the rest, and resumes a cursor into pruned history at the oldest kept event', async () => {
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

    const old = logged.slice(0, 2).map((e) => e.id);
    await stack.services.events!.dataSource.query(`UPDATE events SET recorded_at = now() - interval '3 days' WHERE id = ANY($1::text[])`, [old]);

    const kept = await eventually(async () => {
      const events = await keyEvents();
      return events.some((e) => old.includes(e.id)) ? undefined : events;
    });
    expect(kept.map((e) => e.id)).toEqual(before.filter((e) => !old.includes(e.id)).map((e) => e.id));

    const resumed = await stack.api.get(`/events?type=api_key.created&cursor=${cursor}`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.map((e: any) => e.id)).toEqual(logged.slice(2).map((e) => e.id));
  });
});
