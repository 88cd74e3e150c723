import { eventually } from '../support/api-client';
import { FaultStack, startFaultStack } from '../support/fault-stack';
import { ServiceProcess, spawnService } from '../support/processes';
import { Receiver } from '../support/webhooks-receiver';

const SUBSCRIPTIONS = 30;
const EVENTS = 120;

/**
 * Fan-out through a crash: two webhooks replicas share many subscriptions (each its own endpoint) while
 * events are written one after another, and one replica is killed with SIGKILL mid-way and started again
 * later. Delivery is at least once with idempotent ids (docs/webhooks.md): every subscription must receive
 * every event, in log order, and anything sent twice must be the event just sent again with the same
 * webhook-id (a request the dead replica made whose answer it never recorded), never a later one before
 * an earlier, never one skipped.
 */
describe('webhook fan-out through a kill -9 of a replica', () => {
  let stack: FaultStack;
  let second: ServiceProcess | undefined;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    stack = await startFaultStack({
      WEBHOOKS_ALLOW_INSECURE: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_RETRY_SCHEDULE_MS: '200,500,1000,2000,2000,2000,2000,2000',
      WEBHOOKS_RETRY_JITTER_PERCENT: '0',
      // Fewer slots than subscriptions, so turns are claimed and released throughout, on both replicas.
      WEBHOOKS_MAX_CONCURRENCY: '8',
      WEBHOOKS_EVENTS_PER_TURN: '10',
    });
    second = await spawnService('webhooks', stack.env);
  }, 300_000);

  afterAll(async () => {
    await second?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  it('delivers every event to every subscription in order, a duplicate only as the same message sent again', async () => {
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const receiver = await Receiver.start();
      receivers.push(receiver);
      const created = await stack.api.post('/webhooks', { name: `fan-out ${i}`, url: receiver.url, event_types: ['api_key.created'] });
      expect(created.status).toBe(201);
    }
    const keyIds: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      // One write at a time, each acknowledged: the log's order is the order written.
      const res = await eventually(async () => {
        const r = await stack.api.post('/apikeys', { name: `fan-out ${i}`, scope: 'read' });
        return r.status === 201 ? r : undefined;
      });
      keyIds.push(res.body.data.id);
      if (i === Math.floor(EVENTS / 3)) {
        // The kill lands while the replicas are sending the events written so far.
        await eventually(async () => (receivers.some((r) => r.requests.length > 0) ? true : undefined));
        await stack.processes.webhooks.kill9();
      }
      if (i === Math.floor((2 * EVENTS) / 3)) await stack.start('webhooks');
    }
    const last = keyIds[keyIds.length - 1];
    let duplicates = 0;
    for (const receiver of receivers) {
      await receiver.waitForKey(last, 'api_key.created', 120_000);
      const arrivals = receiver.received('api_key.created');
      for (const request of arrivals) expect(request.headers['webhook-id']).toBe(request.json.id);
      const keys = arrivals.map((r) => r.json.data.key_id as string);
      // Sent again only right after itself: consecutive repeats collapse into the log's order.
      const collapsed = keys.filter((key, i) => i === 0 || keys[i - 1] !== key);
      expect(collapsed).toEqual(keyIds);
      duplicates += keys.length - collapsed.length;
    }
    process.stdout.write(`webhook fan-out through kill -9: ${SUBSCRIPTIONS} subscriptions × ${EVENTS} events, ${duplicates} sent again\n`);
  }, 600_000);
});
