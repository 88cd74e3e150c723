import { eventStreamName } from '@crm/contracts';
import { connect } from 'nats';
import { eventually } from '../support/api-client';
import { spawnService } from '../support/processes';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * A webhooks replica dies (SIGKILL) in the middle of a delivery to a slow endpoint. Its lease on the
 * subscription is short and was only kept alive by its renewals, so another replica sends the event
 * again within seconds, not after the longest possible delivery (WEBHOOKS_TIMEOUT_MS, here a minute).
 */
/** The delivery lease (docs/webhooks.md): a dead replica's hold on a subscription ends within it. */
const LEASE_MS = 10_000;
/**
 * What the takeover may take beyond that: the new replica's next claim and the request. Under a second on
 * a quiet machine; this allows for one many times slower, and stays far below the 90 s a lease covering
 * the whole delivery timeout would hold.
 */
const TAKEOVER_SLACK_MS = 15_000;

describe('webhook delivery after a replica dies mid-delivery', () => {
  let stack: TestStack;
  let receiver: Receiver;
  beforeAll(async () => {
    stack = await startStack({
      services: [],
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '50', WEBHOOKS_TIMEOUT_MS: '60000' },
    });
    receiver = await Receiver.start((_request, index) => (index === 0 ? 'hang' : 200));
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('is taken over by another replica within seconds', async () => {
    const doomed = await spawnService('webhooks', stack.env);
    try {
      // The stack's own first key is announced by an event too; once it is in the stream, the subscription
      // below starts after it and sees only the key this test creates.
      const nc = await connect({ servers: stack.env.NATS_URL });
      try {
        const streams = (await nc.jetstreamManager()).streams;
        await eventually(async () => ((await streams.info(eventStreamName(stack.namespace))).state.messages > 0 ? true : undefined));
      } finally {
        await nc.close();
      }
      const created = await stack.api.post('/webhooks', { name: 'slow', url: receiver.url, event_types: ['api_key.created'] });
      expect(created.status).toBe(201);
      const key = await stack.api.post('/apikeys', { name: 'event', scope: 'read' });
      const [first] = await receiver.waitFor(1, 'api_key.created');
      expect(first.json.data.key_id).toBe(key.body.data.id);

      // Held by the doomed replica, whose request hangs; it dies without releasing anything.
      await doomed.kill9();
      const killedAt = Date.now();
      await stack.startService('webhooks');
      // The lease ends LEASE_MS after the kill at the latest; a replica that took longer to start claims at once.
      const bound = Math.max(LEASE_MS, Date.now() - killedAt) + TAKEOVER_SLACK_MS;
      const [, again] = await receiver.waitFor(2, 'api_key.created', 80_000);
      const takeoverMs = again.receivedAt - killedAt;
      expect(takeoverMs).toBeLessThanOrEqual(bound);
      expect(again.json.id).toBe(first.json.id);
      const deliveries = await eventually(async () => {
        const rows = await stack.api.listAll(`/webhooks/${created.body.data.id}/deliveries`);
        return rows.some((d) => d.status === 'success') ? rows : undefined;
      });
      expect(deliveries.map((d) => d.status).sort()).toEqual(['failed', 'success']);
      // The attempt the dead replica left pending is closed by the claim that took the subscription over.
      expect(deliveries.find((d) => d.status === 'failed')).toEqual(
        expect.objectContaining({ attempt: 1, error: expect.stringMatching(/^interrupted before an answer/) }),
      );
      process.stdout.write(`webhook takeover after SIGKILL: ${takeoverMs} ms\n`);
    } finally {
      await doomed.stop();
    }
  });
});
