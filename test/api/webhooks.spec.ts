import { ulid } from 'ulid';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver, verify } from '../support/webhooks-receiver';

const FAST = {
  WEBHOOKS_ALLOW_INSECURE: 'true',
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOKS_RETRY_SCHEDULE_MS: '150,300',
  WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
  // The longest allowed: an endpoint that never answers stays pending through a test's checks on a slow machine.
  WEBHOOKS_TIMEOUT_MS: '60000',
  WEBHOOKS_DISABLE_AFTER_FAILED_EVENTS: '2',
};

describe('Webhooks', () => {
  let stack: TestStack;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    stack = await startStack({ env: FAST, services: ['webhooks'] });
    // Lets the events of the stack's own start-up (the bootstrap key) reach the webhooks service first,
    // so subscriptions created by the tests start after them.
    const probe = await Receiver.start();
    const created = await stack.api.post('/webhooks', { name: 'probe', url: probe.url });
    const key = await stack.api.post('/apikeys', { name: 'probe', scope: 'read' });
    await probe.waitForKey(key.body.data.id);
    await stack.api.delete(`/webhooks/${created.body.data.id}`);
    await probe.close();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack.stop();
  });

  async function receiver(respond?: Parameters<typeof Receiver.start>[0]): Promise<Receiver> {
    const r = await Receiver.start(respond);
    receivers.push(r);
    return r;
  }

  async function subscribe(url: string, extra: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
    const res = await stack.api.post('/webhooks', { name: 'test hook', url, ...extra });
    expect(res.status).toBe(201);
    return { id: res.body.data.id, secret: res.body.secret };
  }

  /** Produces one `api_key.created` event and returns the key id it carries. */
  async function emitEvent(): Promise<string> {
    const res = await stack.api.post('/apikeys', { name: 'event source', scope: 'read' });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  async function deliveries(id: string, query = ''): Promise<any[]> {
    return stack.api.listAll(`/webhooks/${id}/deliveries${query}`);
  }

  async function subscription(id: string): Promise<any> {
    const res = await stack.api.get(`/webhooks/${id}`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  describe('subscriptions', () => {
    it('creates a subscription and shows its generated secret only in the create response', async () => {
      const created = await stack.api.post('/webhooks', { name: 'CRM sync', url: 'http://127.0.0.1:9/hook', metadata: { team: 'ops' } });
      expect(created.status).toBe(201);
      const { data, secret } = created.body;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
      expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
      expect(data).toEqual({
        id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
        name: 'CRM sync',
        url: 'http://127.0.0.1:9/hook',
        event_types: null,
        filter: null,
        status: 'active',
        failure_count: 0,
        last_delivered_at: null,
        metadata: { team: 'ops' },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(Object.keys(created.body).sort()).toEqual(['data', 'secret']);

      const got = await stack.api.get(`/webhooks/${data.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ data });
      const listed = await stack.api.get('/webhooks');
      expect(listed.status).toBe(200);
      expect(listed.body.data).toContainEqual(data);
      for (const text of [got.text, listed.text]) {
        expect(text).not.toContain(secret.slice(6, 30));
        expect(text).not.toContain('whsec_');
      }
    });

    it('keeps a secret the client chose', async () => {
      const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
      const created = await stack.api.post('/webhooks', { name: 'own secret', url: 'http://127.0.0.1:9/x', secret });
      expect(created.status).toBe(201);
      expect(created.body.secret).toBe(secret);
    });

    it('validates the create body and names each bad field', async () => {
      const missing = await stack.api.post('/webhooks', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('validation_failed');
      expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'url']);

      const bad = await stack.api.post('/webhooks', {
        name: 'x'.repeat(201),
        url: 'http://127.0.0.1:9/x',
        secret: 'not-a-secret',
        event_types: ['contact.created', 'no.such_type'],
        metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
        colour: 'red',
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['colour', 'event_types', 'metadata', 'name', 'secret']);

      const empty = await stack.api.post('/webhooks', { name: 'n', url: 'http://127.0.0.1:9/x', event_types: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.error.details[0]).toMatchObject({ field: 'event_types' });

      const shortKey = await stack.api.post('/webhooks', { name: 'n', url: 'http://127.0.0.1:9/x', secret: `whsec_${Buffer.alloc(16).toString('base64')}` });
      expect(shortKey.status).toBe(400);
      expect(shortKey.body.error.details[0]).toMatchObject({ field: 'secret' });

      const notUrl = await stack.api.post('/webhooks', { name: 'n', url: 'ftp://example.com/x' });
      expect(notUrl.status).toBe(400);
      expect(notUrl.body.error.details[0]).toMatchObject({ field: 'url', code: 'invalid_value' });
    });

    it('answers 404 for unknown ids', async () => {
      for (const id of ['whk_01aaaaaaaaaaaaaaaaaaaaaaaa', 'nonsense']) {
        expect((await stack.api.get(`/webhooks/${id}`)).status).toBe(404);
        expect((await stack.api.patch(`/webhooks/${id}`, { name: 'x' })).status).toBe(404);
        expect((await stack.api.delete(`/webhooks/${id}`)).status).toBe(404);
        expect((await stack.api.get(`/webhooks/${id}/deliveries`)).status).toBe(404);
        expect((await stack.api.post(`/webhooks/${id}/ping`)).status).toBe(404);
      }
    });

    it('updates fields, filters the list by status and pages through it', async () => {
      const a = await subscribe('http://127.0.0.1:9/a');
      const b = await subscribe('http://127.0.0.1:9/b');
      const patched = await stack.api.patch(`/webhooks/${b.id}`, { name: 'renamed', status: 'paused', event_types: ['api_key.revoked'], metadata: { x: 1 } });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ id: b.id, name: 'renamed', status: 'paused', event_types: ['api_key.revoked'], metadata: { x: 1 } });
      expect(Date.parse(patched.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(patched.body.data.created_at));
      expect(patched.text).not.toContain('whsec_');

      const allTypes = await stack.api.patch(`/webhooks/${b.id}`, { event_types: null });
      expect(allTypes.body.data.event_types).toBeNull();
      const badStatus = await stack.api.patch(`/webhooks/${b.id}`, { status: 'sleeping' });
      expect(badStatus.status).toBe(400);
      expect(badStatus.body.error.details[0]).toMatchObject({ field: 'status' });
      const nulls = await stack.api.patch(`/webhooks/${b.id}`, { name: null, url: null, secret: null, status: null, metadata: null });
      expect(nulls.status).toBe(400);
      expect(nulls.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['metadata', 'name', 'secret', 'status', 'url']);
      const nullSecret = await stack.api.post('/webhooks', { name: 'n', url: 'http://127.0.0.1:9/x', secret: null });
      expect(nullSecret.status).toBe(400);

      const paused = await stack.api.listAll('/webhooks?status=paused');
      expect(paused.map((w) => w.id)).toEqual([b.id]);
      const active = await stack.api.listAll('/webhooks?status=active');
      expect(active.map((w) => w.id)).toContain(a.id);
      expect(active.every((w) => w.status === 'active')).toBe(true);
      expect((await stack.api.get('/webhooks?status=gone')).status).toBe(400);

      const first = await stack.api.get('/webhooks?limit=1');
      expect(first.body.data).toHaveLength(1);
      expect(first.body.has_more).toBe(true);
      const second = await stack.api.get(`/webhooks?limit=1&cursor=${first.body.next_cursor}`);
      expect(second.body.data[0].id > first.body.data[0].id).toBe(true);
      const all = await stack.api.listAll('/webhooks', 2);
      expect(new Set(all.map((w) => w.id)).size).toBe(all.length);
      const last = await stack.api.get(`/webhooks?limit=200`);
      expect(last.body.has_more).toBe(false);
      expect(last.body.next_cursor).toBeUndefined();
    });

    it('deletes a subscription and its delivery log', async () => {
      const sub = await subscribe('http://127.0.0.1:9/gone');
      const removed = await stack.api.delete(`/webhooks/${sub.id}`);
      expect(removed.status).toBe(204);
      expect(removed.text).toBe('');
      expect((await stack.api.get(`/webhooks/${sub.id}`)).status).toBe(404);
      expect((await stack.api.get(`/webhooks/${sub.id}/deliveries`)).status).toBe(404);
      expect((await stack.api.delete(`/webhooks/${sub.id}`)).status).toBe(404);
    });
  });

  describe('delivery', () => {
    it('POSTs each event signed by the Standard Webhooks scheme and records the attempt', async () => {
      const r = await receiver();
      const sub = await subscribe(r.url);
      const keyId = await emitEvent();
      const request = await r.waitForKey(keyId);
      expect(verify(sub.secret, request)).toEqual(request.json);
      expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toThrow();
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toBe(request.json.id);
      expect(request.json).toEqual({
        id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
        type: 'api_key.created',
        occurred_at: expect.any(String),
        actor: { type: 'api_key', id: expect.stringMatching(/^key_/) },
        via: 'api',
        request_id: expect.any(String),
        data: expect.objectContaining({ key_id: keyId }),
      });
      expect(Object.keys(request.json)).toEqual(['id', 'type', 'occurred_at', 'actor', 'via', 'request_id', 'data']);

      const log = await eventually(async () => {
        const rows = (await deliveries(sub.id)).filter((d) => d.event_id === request.json.id);
        return rows.length === 1 && rows[0].status === 'success' ? rows : undefined;
      });
      expect(log[0]).toEqual({
        id: expect.stringMatching(/^whd_[0-9a-z]{26}$/),
        subscription_id: sub.id,
        event_id: request.json.id,
        attempt: 1,
        status: 'success',
        http_status: 200,
        error: null,
        duration_ms: expect.any(Number),
        created_at: expect.any(String),
      });
      const after = await subscription(sub.id);
      expect(after.last_delivered_at).not.toBeNull();
      expect(after.failure_count).toBe(0);
    });

    it('sends only the event types a subscription asked for', async () => {
      const revokedOnly = await receiver();
      const everything = await receiver();
      await subscribe(revokedOnly.url, { event_types: ['api_key.revoked'] });
      await subscribe(everything.url);
      const keyId = await emitEvent();
      expect((await stack.api.delete(`/apikeys/${keyId}`)).status).toBe(204);
      // A later revocation both receive: once it is delivered, anything sent for the events before it came first.
      const marker = await emitEvent();
      expect((await stack.api.delete(`/apikeys/${marker}`)).status).toBe(204);
      await revokedOnly.waitForKey(marker, 'api_key.revoked');
      await everything.waitForKey(marker, 'api_key.revoked');
      const sent = (r: Receiver) => r.requests.map((q) => [q.json.type, q.json.data.key_id]);
      expect(sent(revokedOnly)).toEqual([
        ['api_key.revoked', keyId],
        ['api_key.revoked', marker],
      ]);
      expect(revokedOnly.requests[0].json.data).toEqual({ key_id: keyId });
      // Subscriptions left by earlier tests on dead endpoints may be disabled meanwhile.
      expect(sent(everything).filter(([type]) => type !== 'webhook.disabled')).toEqual([
        ['api_key.created', keyId],
        ['api_key.revoked', keyId],
        ['api_key.created', marker],
        ['api_key.revoked', marker],
      ]);
    });

    it('delivers events to each subscription in log order', async () => {
      const r = await receiver();
      await subscribe(r.url);
      const keyIds: string[] = [];
      for (let i = 0; i < 8; i++) keyIds.push(await emitEvent());
      // One more event: once it is delivered, a late or repeated delivery of the eight would have come first.
      const marker = await emitEvent();
      await r.waitForKey(marker);
      // Subscriptions left by earlier tests on dead endpoints may be disabled meanwhile.
      const sent = r.requests.filter((q) => q.json.type !== 'webhook.disabled');
      expect(sent.map((q) => [q.json.type, q.json.data.key_id])).toEqual([...keyIds, marker].map((id) => ['api_key.created', id]));
    });

    it('retries a failing endpoint with the same webhook-id until it succeeds', async () => {
      const r = await receiver((_req, index) => (index < 2 ? 500 : 204));
      // Only the event this test emits: other tests' subscriptions may emit webhook.disabled meanwhile.
      const sub = await subscribe(r.url, { event_types: ['api_key.created'] });
      await emitEvent();
      const requests = await r.waitFor(3);
      expect(new Set(requests.map((q) => q.headers['webhook-id'])).size).toBe(1);
      for (const q of requests) expect(verify(sub.secret, q)).toEqual(requests[0].json);
      const log = await eventually(async () => {
        const rows = await deliveries(sub.id);
        return rows.length === 3 && rows[2].status === 'success' ? rows : undefined;
      });
      expect(log.map((d) => [d.attempt, d.status, d.http_status])).toEqual([
        [1, 'failed', 500],
        [2, 'failed', 500],
        [3, 'success', 204],
      ]);
      expect(log[0].error).toContain('500');
      const failed = await deliveries(sub.id, '?status=failed');
      expect(failed.map((d) => d.attempt)).toEqual([1, 2]);
      const after = await subscription(sub.id);
      expect(after.failure_count).toBe(0);
      expect(after.last_delivered_at).not.toBeNull();
    });

    it('disables a subscription after consecutive failed events, says why, and re-enabling resets failure_count', async () => {
      const dead = await receiver(() => 503);
      const watcher = await receiver();
      const sub = await subscribe(dead.url, { event_types: ['api_key.created'] });
      await subscribe(watcher.url, { event_types: ['webhook.disabled'] });
      await emitEvent();
      await emitEvent();
      // Subscriptions left by earlier tests may be disabled meanwhile; find the notice about this one.
      const notice = await eventually(async () => watcher.received('webhook.disabled').find((q) => q.json.data.webhook_id === sub.id));
      expect(notice.json.data).toMatchObject({ webhook_id: sub.id, failure_count: 2, reason: expect.stringContaining('503') });

      const disabled = await subscription(sub.id);
      expect(disabled).toMatchObject({ status: 'disabled', failure_count: 2, last_delivered_at: null });
      // 2 events, each tried once and retried twice (the schedule has two delays).
      const log = await deliveries(sub.id);
      expect(log).toHaveLength(6);
      expect(log.every((d) => d.status === 'failed' && d.http_status === 503)).toBe(true);
      expect(log.map((d) => d.attempt)).toEqual([1, 2, 3, 1, 2, 3]);
      expect(dead.requests).toHaveLength(6);

      dead.respond = () => 200;
      const enabled = await stack.api.patch(`/webhooks/${sub.id}`, { status: 'active' });
      expect(enabled.status).toBe(200);
      expect(enabled.body.data).toMatchObject({ status: 'active', failure_count: 0 });
      await emitEvent();
      await eventually(async () => ((await subscription(sub.id)).last_delivered_at ? true : undefined));
    });

    it('holds events while paused and resumes where it stopped', async () => {
      const r = await receiver();
      const witness = await receiver();
      const sub = await subscribe(r.url, { event_types: ['api_key.created'] });
      await subscribe(witness.url, { event_types: ['api_key.created'] });
      const first = await emitEvent();
      await r.waitFor(1);
      expect((await stack.api.patch(`/webhooks/${sub.id}`, { status: 'paused' })).body.data.status).toBe('paused');

      const held = [await emitEvent(), await emitEvent()];
      // The witness getting the held events shows dispatch ran after they arrived; the claim that found
      // the witness due is the one that skipped the paused subscription.
      const seen = await witness.waitFor(3);
      expect(seen.map((q) => q.json.data.key_id)).toEqual([first, ...held]);
      expect(r.requests.map((q) => q.json.data.key_id)).toEqual([first]);

      expect((await stack.api.patch(`/webhooks/${sub.id}`, { status: 'active' })).body.data.status).toBe('active');
      // An event after the resume: once it is delivered, the held ones (and any repeat of them) came before it.
      const marker = await emitEvent();
      await r.waitForKey(marker);
      expect(r.requests.map((q) => q.json.data.key_id)).toEqual([first, ...held, marker]);
    });

    it('replays from a given event, that event included, in order', async () => {
      const r = await receiver();
      const sub = await subscribe(r.url, { event_types: ['api_key.created'] });
      for (let i = 0; i < 3; i++) await emitEvent();
      const original = (await r.waitFor(3)).map((q) => q.json.id);

      const replayed = await stack.api.post(`/webhooks/${sub.id}/replay`, { event_id: original[1] });
      expect(replayed.status).toBe(200);
      expect(replayed.body.data).toMatchObject({ id: sub.id, status: 'active' });
      expect(replayed.text).not.toContain('whsec_');
      await r.waitFor(5);
      // A later event after the replay: once it is delivered, any extra replayed delivery came before it.
      const marker = await emitEvent();
      const last = await r.waitForKey(marker);
      expect(r.ids()).toEqual([...original, original[1], original[2], last.json.id]);
      const attempts = (await deliveries(sub.id)).filter((d) => d.event_id === original[1]).map((d) => d.attempt);
      expect(attempts).toEqual([1, 2]);

      // An id of now that no event has: one of long ago is past the copies' retention (410, retention.spec.ts).
      const unknown = await stack.api.post(`/webhooks/${sub.id}/replay`, { event_id: `evt_${ulid().toLowerCase()}` });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      const missing = await stack.api.post(`/webhooks/${sub.id}/replay`, {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.details[0]).toMatchObject({ field: 'event_id', code: 'required' });
    });

    it('does not let a dead endpoint hold up a healthy one', async () => {
      const stuck = await receiver(() => 'hang');
      const healthy = await receiver();
      const slow = await subscribe(stuck.url, { event_types: ['api_key.created'] });
      await subscribe(healthy.url, { event_types: ['api_key.created'] });
      const keyIds = [await emitEvent(), await emitEvent(), await emitEvent()];
      await healthy.waitFor(3);
      expect(healthy.requests.map((q) => q.json.data.key_id)).toEqual(keyIds);
      // The stuck endpoint is still on its first attempt at the first event: it never answered, so nothing
      // later was sent to it.
      expect(stuck.requests.map((q) => q.json.data.key_id)).toEqual([keyIds[0]]);
      const log = await deliveries(slow.id);
      expect(log).toEqual([expect.objectContaining({ event_id: stuck.requests[0].json.id, attempt: 1, status: 'pending' })]);
      await stack.api.patch(`/webhooks/${slow.id}`, { status: 'paused' });
    });
  });

  describe('ping', () => {
    it('sends a signed test payload and reports the answer', async () => {
      const r = await receiver();
      const sub = await subscribe(r.url);
      const res = await stack.api.post(`/webhooks/${sub.id}/ping`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { http_status: 200, duration_ms: expect.any(Number) } });
      const [ping] = await r.waitFor(1, 'webhook.ping');
      expect(verify(sub.secret, ping)).toMatchObject({ type: 'webhook.ping', data: { webhook_id: sub.id } });
      expect(await deliveries(sub.id)).toEqual([]);
    });

    it('answers 502 with an error when the endpoint answers non-2xx or cannot be reached', async () => {
      const r = await receiver(() => 500);
      const sub = await subscribe(r.url);
      const res = await stack.api.post(`/webhooks/${sub.id}/ping`);
      expect(res.status).toBe(502);
      expect(res.body.error).toMatchObject({ code: 'bad_gateway', message: expect.stringContaining('HTTP 500') });

      const closed = await receiver();
      await closed.close();
      const gone = await subscribe(closed.url);
      const unreachable = await stack.api.post(`/webhooks/${gone.id}/ping`);
      expect(unreachable.status).toBe(502);
      expect(unreachable.body.error).toMatchObject({ code: 'bad_gateway', message: expect.stringContaining('connection refused') });
    });
  });
});
