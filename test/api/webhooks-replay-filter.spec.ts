import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * A replay sends the named event and every later one, each filtered by the subscription's current
 * event_types: an event that no longer matches them is skipped, the named one included (docs/webhooks.md, Replay).
 */
describe('Webhook replay and event_types', () => {
  let stack: TestStack;
  let receiver: Receiver;
  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' },
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function createKey(): Promise<string> {
    const res = await stack.api.post('/apikeys', { name: 'event source', scope: 'read' });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  it('skips the events outside the current event_types, the named one included', async () => {
    const created = await stack.api.post('/webhooks', { name: 'replayed', url: receiver.url });
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    // Under event_types null, a created, a revoked and a created event are delivered.
    const revokedKey = await createKey();
    expect((await stack.api.delete(`/apikeys/${revokedKey}`)).status).toBe(204);
    const laterKey = await createKey();
    const revoked = await receiver.waitForKey(revokedKey, 'api_key.revoked', 120_000);
    const later = await receiver.waitForKey(laterKey, undefined, 120_000);

    expect((await stack.api.patch(`/webhooks/${id}`, { event_types: ['api_key.created'] })).status).toBe(200);
    const delivered = receiver.requests.length;
    const replay = await stack.api.post(`/webhooks/${id}/replay`, { event_id: revoked.json.id });
    expect(replay.status).toBe(200);

    // A created event after the replay: every event the replay sends comes before it.
    const markerKey = await createKey();
    const marker = await receiver.waitForKey(markerKey, undefined, 120_000);
    const sinceReplay = receiver.requests.slice(delivered, receiver.requests.indexOf(marker) + 1);
    expect(sinceReplay.map((r) => [r.json.type, r.json.id])).toEqual([
      ['api_key.created', later.json.id],
      ['api_key.created', marker.json.id],
    ]);
  }, 300_000);
});
