import { RunningService } from '@crm/runtime';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

describe('Webhooks with several replicas and a tightened address policy', () => {
  let stack: TestStack;
  let replica: RunningService | undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    stack = await startStack({
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '50', WEBHOOKS_RETRY_SCHEDULE_MS: '100' },
      services: ['webhooks'],
    });
  });
  afterAll(async () => {
    await replica?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await stack.stop();
  });

  async function emitEvent(): Promise<string> {
    const res = await stack.api.post('/apikeys', { name: 'event source', scope: 'read' });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  it('two replicas deliver every event once per subscription, in order', async () => {
    replica = await startWebhooks(stack.env);
    const subs: { id: string; receiver: Receiver }[] = [];
    for (let i = 0; i < 4; i++) {
      const receiver = await Receiver.start();
      receivers.push(receiver);
      const created = await stack.api.post('/webhooks', { name: `replica ${i}`, url: receiver.url, event_types: ['api_key.created'] });
      expect(created.status).toBe(201);
      subs.push({ id: created.body.data.id, receiver });
    }
    const keyIds: string[] = [];
    for (let i = 0; i < 12; i++) keyIds.push(await emitEvent());
    for (const { id, receiver } of subs) {
      await receiver.waitForKey(keyIds[keyIds.length - 1]);
      expect(receiver.keysAmong(keyIds)).toEqual(keyIds);
      const ids = receiver.requests.map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(ids.length);
      const log = await eventually(async () => {
        const rows = await stack.api.listAll(`/webhooks/${id}/deliveries`);
        return rows.length >= keyIds.length && rows.every((d) => d.status === 'success') ? rows : undefined;
      });
      expect(log.every((d) => d.attempt === 1)).toBe(true);
      expect(log).toHaveLength(receiver.requests.length);
    }
  });

  it('applies a filter changed through either replica on both, from the change on', async () => {
    const receiver = await Receiver.start();
    receivers.push(receiver);
    const named = (prefix: string) => ({ 'data.name': { $starts_with: prefix } });
    const created = await stack.api.post('/webhooks', { name: 'filtered', url: receiver.url, event_types: ['api_key.created'], filter: named('r0-') });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const key = async (name: string) => {
      const res = await stack.api.post('/apikeys', { name, scope: 'read' });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    // Each round's PATCH reaches one replica or the other; both have screened with the filter before it.
    const expected: string[] = [];
    for (let round = 0; round < 6; round++) {
      if (round > 0) expect((await stack.api.patch(`/webhooks/${id}`, { filter: named(`r${round}-`) })).status).toBe(200);
      await key(`r${round - 1}-late`);
      await key(`other-${round}`);
      const hit = await key(`r${round}-hit`);
      expected.push(`r${round}-hit`);
      await receiver.waitForKey(hit);
    }
    expect(receiver.requests.map((r) => r.json.data.name)).toEqual(expected);
  });

  it('checks the address policy again at delivery and ping time', async () => {
    const receiver = await Receiver.start();
    receivers.push(receiver);
    const created = await stack.api.post('/webhooks', { name: 'loopback', url: receiver.url });
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    // Restart every replica with the production policy: the stored loopback URL must now be refused.
    await replica?.close();
    replica = undefined;
    await stack.stopService('webhooks');
    await stack.startService('webhooks', { WEBHOOKS_ALLOW_INSECURE: 'false', WEBHOOKS_ALLOW_PRIVATE: 'false' });

    const ping = await stack.api.post(`/webhooks/${id}/ping`);
    expect(ping.status).toBe(502);
    expect(ping.body.error).toMatchObject({ code: 'bad_gateway', message: expect.stringContaining('private, loopback and link-local') });

    await emitEvent();
    const refused = await eventually(async () => {
      const rows = await stack.api.listAll(`/webhooks/${id}/deliveries?status=failed`);
      return rows.length ? rows : undefined;
    });
    expect(refused[0]).toMatchObject({ attempt: 1, http_status: null, error: expect.stringContaining('refused to connect') });
    expect(receiver.requests).toHaveLength(0);
    await stack.api.patch(`/webhooks/${id}`, { status: 'paused' });

    const insecure = await stack.api.post('/webhooks', { name: 'plain', url: 'http://hooks.example.com/in' });
    expect(insecure.status).toBe(400);
    expect(insecure.body.error.details).toEqual([{ field: 'url', code: 'invalid_value', message: 'url must use https://' }]);
    for (const url of ['https://127.0.0.1/in', 'https://[::1]/in', 'https://localhost/in', 'https://169.254.169.254/latest/meta-data']) {
      const res = await stack.api.post('/webhooks', { name: 'private', url });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('url');
    }
    const patched = await stack.api.patch(`/webhooks/${id}`, { url: 'http://hooks.example.com/in' });
    expect(patched.status).toBe(400);
    const fine = await stack.api.post('/webhooks', { name: 'public', url: 'https://hooks.example.com/in' });
    expect(fine.status).toBe(201);
  });
});
