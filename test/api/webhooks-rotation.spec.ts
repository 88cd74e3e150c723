import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { ReceivedRequest, Receiver, verify } from '../support/webhooks-receiver';

/** Long enough for a delivery and a ping after the PATCH on a machine many times slower than a quiet one. */
const OVERLAP_SECONDS = 20;
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Replacing a subscription's signing secret with PATCH: for WEBHOOKS_SECRET_OVERLAP_SECONDS afterwards
 * every request carries a signature with the new secret and one with the old, so a receiver verifies
 * with either; after that, only the new one.
 */
describe('Webhook signing secret rotation', () => {
  let stack: TestStack;
  let receiver: Receiver;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_SECRET_OVERLAP_SECONDS: String(OVERLAP_SECONDS) },
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  /** Creates an API key (an `api_key.created` event) and waits for its delivery. */
  async function deliverOne(): Promise<ReceivedRequest> {
    const created = await stack.api.post('/apikeys', { name: 'rotation', scope: 'read' });
    expect(created.status).toBe(201);
    return receiver.waitForKey(created.body.data.id);
  }

  function signatures(request: ReceivedRequest): string[] {
    return String(request.headers['webhook-signature']).split(' ');
  }

  it(
    'signs with the old and the new secret during the overlap, then with the new one only',
    async () => {
      const oldSecret = newSecret();
      const created = await stack.api.post('/webhooks', { name: 'rotating', url: receiver.url, secret: oldSecret, event_types: ['api_key.created'] });
      expect(created.status).toBe(201);
      const id = created.body.data.id;
      const before = await deliverOne();
      expect(signatures(before)).toHaveLength(1);
      expect(verify(oldSecret, before)).toEqual(before.json);

      const newSecretValue = newSecret();
      const patchedAt = Date.now();
      const patched = await stack.api.patch(`/webhooks/${id}`, { secret: newSecretValue });
      expect(patched.status).toBe(200);
      expect(patched.text).not.toContain('whsec_');
      expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));

      // During the overlap: two `v1,` signatures, current first; a receiver with either secret accepts.
      const during = await deliverOne();
      expect(signatures(during)).toEqual([expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/), expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/)]);
      expect(verify(newSecretValue, during)).toEqual(during.json);
      expect(verify(oldSecret, during)).toEqual(during.json);
      expect(() => verify(newSecret(), during)).toThrow();
      const ping = await stack.api.post(`/webhooks/${id}/ping`);
      expect(ping.status).toBe(200);
      const [pinged] = await receiver.waitFor(1, 'webhook.ping');
      expect(signatures(pinged)).toHaveLength(2);
      expect(verify(oldSecret, pinged)).toMatchObject({ type: 'webhook.ping' });
      expect(verify(newSecretValue, pinged)).toMatchObject({ type: 'webhook.ping' });

      // Keep delivering until a request carries one signature: the overlap has ended.
      const after = await eventually(
        async () => {
          const request = await deliverOne();
          return signatures(request).length === 1 ? request : undefined;
        },
        OVERLAP_SECONDS * 1000 + 60_000,
        200,
      );
      expect(after.receivedAt - patchedAt).toBeGreaterThanOrEqual(OVERLAP_SECONDS * 1000 - 50);
      expect(verify(newSecretValue, after)).toEqual(after.json);
      expect(() => verify(oldSecret, after)).toThrow();
      // Every request before that one carried both signatures.
      const since = receiver.received('api_key.created').filter((r) => r.receivedAt >= during.receivedAt && r !== after);
      for (const request of since) expect(signatures(request)).toHaveLength(2);
    },
    OVERLAP_SECONDS * 1000 + 120_000,
  );

  it('changes nothing when PATCH sends the secret already in use', async () => {
    const secret = newSecret();
    const created = await stack.api.post('/webhooks', { name: 'same', url: receiver.url, secret, event_types: ['api_key.revoked'] });
    const again = await stack.api.patch(`/webhooks/${created.body.data.id}`, { secret });
    expect(again.status).toBe(200);
    expect(again.body.data.updated_at).toBe(created.body.data.updated_at);
    const before = receiver.received('webhook.ping').length;
    expect((await stack.api.post(`/webhooks/${created.body.data.id}/ping`)).status).toBe(200);
    const ping = (await receiver.waitFor(before + 1, 'webhook.ping'))[before];
    expect(signatures(ping)).toHaveLength(1);
    expect(verify(secret, ping)).toMatchObject({ type: 'webhook.ping' });
  });
});
