import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

const LOCAL = { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' };

describe('Webhook subscriptions', () => {
  describe('PATCH url', () => {
    let stack: TestStack;
    const receivers: Receiver[] = [];
    beforeAll(async () => {
      // A short first retry, then an hour: an event waiting out the hour is still waiting when a test ends.
      stack = await startStack({ services: ['webhooks'], env: { ...LOCAL, WEBHOOKS_RETRY_SCHEDULE_MS: '100,3600000', WEBHOOKS_RETRY_JITTER_PERCENT: '0' } });
    });
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.close()));
      await stack?.stop();
    });

    async function receiver(respond: Parameters<typeof Receiver.start>[0]): Promise<Receiver> {
      const r = await Receiver.start(respond);
      receivers.push(r);
      return r;
    }

    it("starts the current event's retry schedule afresh and tries at once (docs/webhooks.md)", async () => {
      const dead = await receiver(() => 500);
      // The new endpoint fails once more, then answers: with the schedule started afresh that next try is
      // the schedule's first delay away; on the old schedule the event would be given up on.
      const moved = await receiver((_request, index) => (index === 0 ? 500 : 200));
      // Only this test's key: the bootstrap key's event, published as the stack starts, can reach the log after
      // the subscription is made (the relay's first window waits for its own connection), and would then be
      // first in line, failing its way to the hour-long retry ahead of the event this test is about.
      const created = await stack.api.post('/webhooks', {
        name: 'moving',
        url: dead.url,
        event_types: ['api_key.created'],
        filter: { 'data.name': 'event source' },
      });
      expect(created.status).toBe(201);
      const id = created.body.data.id;

      const key = await stack.api.post('/apikeys', { name: 'event source', scope: 'read' });
      expect(key.status).toBe(201);
      const [event] = await dead.waitFor(2, undefined, 120_000);
      // Both attempts are recorded: the event now waits an hour for its third.
      await eventually(async () => {
        const log = await stack.api.listAll(`/webhooks/${id}/deliveries?status=failed`);
        return log.length === 2 ? true : undefined;
      }, 120_000);

      expect((await stack.api.patch(`/webhooks/${id}`, { url: moved.url })).status).toBe(200);
      const requests = await moved.waitFor(2, undefined, 120_000);
      expect(requests.map((r) => r.json.id)).toEqual([event.json.id, event.json.id]);
      const log = await eventually(async () => {
        const all = await stack.api.listAll<{ event_id: string; attempt: number; status: string }>(`/webhooks/${id}/deliveries`);
        return all.some((d) => d.status === 'success') ? all : undefined;
      }, 120_000);
      expect(log.map((d) => [d.event_id, d.attempt, d.status])).toEqual([
        [event.json.id, 1, 'failed'],
        [event.json.id, 2, 'failed'],
        [event.json.id, 3, 'failed'],
        [event.json.id, 4, 'success'],
      ]);
      expect(dead.requests).toHaveLength(2);
      expect((await stack.api.get(`/webhooks/${id}`)).body.data).toMatchObject({ failure_count: 0, last_delivered_at: expect.any(String) });
    }, 600_000);
  });

  describe('the subscription cap', () => {
    const CAP = 100;
    let stack: TestStack;
    beforeAll(async () => {
      stack = await startStack({ services: ['webhooks'], env: LOCAL });
    });
    afterAll(() => stack?.stop());

    const create = (n: number) => stack.api.post('/webhooks', { name: `hook ${n}`, url: 'http://127.0.0.1:9/hook', event_types: ['webhook.disabled'] });

    it('refuses a subscription past 100 with 409 conflict, also to creates racing for the last places', async () => {
      for (let n = 0; n < CAP - 5; n += 5) {
        const batch = await Promise.all([0, 1, 2, 3, 4].map((i) => create(n + i)));
        expect(batch.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      }
      const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => create(CAP + i)));
      expect(racing.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(7).fill(409)]);
      expect((await stack.api.listAll('/webhooks')).length).toBe(CAP);

      const over = await create(CAP + 100);
      expect(over.status).toBe(409);
      expect(over.body).toEqual({ error: { code: 'conflict', message: expect.stringContaining(String(CAP)) } });

      const [first] = (await stack.api.get('/webhooks?limit=1')).body.data;
      expect((await stack.api.delete(`/webhooks/${first.id}`)).status).toBe(204);
      expect((await create(CAP + 101)).status).toBe(201);
      expect((await create(CAP + 102)).status).toBe(409);
    }, 600_000);
  });
});
