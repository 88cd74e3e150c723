import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * What filters cost a deployment (docs/webhooks.md, Filters: what screening costs): screening is bounded per
 * pass and runs beside the deliveries, so a costly filter replaying a long backlog holds up no other
 * subscription; the deployment's filters together have a cost cap; one filter's size limits apply to what a
 * POST or PATCH gives, not to a filter stored before them.
 */
describe('Webhook screening and filter costs', () => {
  let stack: TestStack;
  let pg: Client;
  const receivers: Receiver[] = [];
  const FILTERS_MAX_COST = 60;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      env: {
        WEBHOOKS_ALLOW_INSECURE: 'true',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
        WEBHOOKS_FILTERS_MAX_COST: String(FILTERS_MAX_COST),
      },
    });
    pg = new Client({ connectionString: stack.databaseUrl });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  async function receiver(): Promise<Receiver> {
    const r = await Receiver.start();
    receivers.push(r);
    return r;
  }

  async function subscribe(body: Record<string, unknown>): Promise<string> {
    const res = await stack.api.post('/webhooks', { name: 'screened', url: (await receiver()).url, ...body });
    if (res.status !== 201) throw new Error(`POST /webhooks answered ${res.status}: ${res.text}`);
    return res.body.data.id;
  }

  const bookmark = async (id: string) => Number((await pg.query(`SELECT bookmark FROM webhooks.subscriptions WHERE id = $1`, [id])).rows[0].bookmark);
  /** `n` distinct needles of `length` characters no key id contains. */
  const needles = (n: number, length: number) => Array.from({ length: n }, (_, i) => `${i}:${'~'.repeat(length - String(i).length - 1)}`);
  /** A filter of `n` conditions on the key id of api_key.revoked events. */
  const costly = (n: number, length = 100) => ({ $or: needles(n, length).map((needle) => ({ 'data.key_id': { $contains: needle } })) });
  const deleteAll = async () => {
    for (const { id } of await stack.api.listAll('/webhooks')) expect((await stack.api.delete(`/webhooks/${id}`)).status).toBe(204);
  };

  it("delivers another subscription's new event while a costly filter is still screening a replayed backlog", async () => {
    // A long history, written as the intake would have copied it: revocations with long key ids, each tested
    // with 50 `$contains` conditions that never hold.
    const BACKLOG = 40_000;
    await pg.query('BEGIN');
    // The intake's insert lock, so no event it copies meanwhile becomes visible before these.
    await pg.query(`SELECT pg_advisory_xact_lock(hashtext('crm:webhooks:event-insert'))`);
    const backlog = await pg.query(
      `WITH added AS (
         INSERT INTO webhooks.webhook_events (id, type, body)
         SELECT 'evt_' || lpad(n::text, 26, '0'), 'api_key.revoked',
                json_build_object('id', 'evt_' || lpad(n::text, 26, '0'), 'type', 'api_key.revoked', 'occurred_at', now(),
                                  'actor', NULL, 'via', NULL, 'request_id', NULL, 'data', json_build_object('key_id', repeat('k', 600) || n))::text
         FROM generate_series(1, $1::int) AS n
         RETURNING position, id)
       SELECT min(position)::text AS first, max(position)::text AS last, min(id) AS first_id FROM added`,
      [BACKLOG],
    );
    await pg.query('COMMIT');
    const { first, last, first_id: firstId } = backlog.rows[0];
    const heavy = await subscribe({ event_types: ['api_key.revoked'], filter: costly(50) });
    const live = await subscribe({ event_types: ['api_key.created'], filter: { 'data.name': 'marker' } });
    const liveReceiver = receivers[receivers.length - 1];
    expect((await stack.api.post(`/webhooks/${heavy}/replay`, { event_id: firstId })).status).toBe(200);

    // Screening the backlog is under way: it has moved on from the replayed event, and is not through.
    await eventually(async () => ((await bookmark(heavy)) >= Number(first) ? true : undefined), 120_000, 20);
    const marker = await stack.api.post('/apikeys', { name: 'marker', scope: 'read' });
    expect(marker.status).toBe(201);
    await liveReceiver.waitForKey(marker.body.data.id, 'api_key.created', 120_000);
    // A pass that screens from the oldest waiting bookmark tests the live subscription's event only in the
    // window that also takes the replayed one to the end of its backlog, in the same move.
    expect(await bookmark(heavy)).toBeLessThan(Number(last));
    expect(await bookmark(live)).toBeGreaterThan(Number(last));

    // The costly filter gets through its backlog too, a share at a time, without delivering anything.
    await eventually(async () => ((await bookmark(heavy)) >= Number(last) ? true : undefined), 300_000, 200);
    expect(receivers[receivers.length - 2].requests).toHaveLength(0);
    await deleteAll();
  }, 600_000);

  it('refuses a filter that would take the deployment past WEBHOOKS_FILTERS_MAX_COST, on POST and on PATCH', async () => {
    await deleteAll();
    const first = await subscribe({ event_types: ['api_key.revoked'], filter: costly(40, 20) });
    // The same filter again is tested once per event with the first: it adds nothing.
    await subscribe({ event_types: ['api_key.revoked'], filter: costly(40, 20) });
    const past = await stack.api.post('/webhooks', { name: 'past', url: (await receiver()).url, event_types: ['api_key.revoked'], filter: costly(21, 20) });
    expect(past.status).toBe(409);
    expect(past.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'filter', code: 'too_costly', message: expect.any(String) }] });
    expect(past.body.error.message).toContain(`at most ${FILTERS_MAX_COST} conditions`);
    expect(past.body.error.message).toContain('WEBHOOKS_FILTERS_MAX_COST');
    const fits = await subscribe({ event_types: ['api_key.revoked'], filter: costly(20, 20) });

    // A PATCH is measured without the filter it replaces.
    const grown = await stack.api.patch(`/webhooks/${fits}`, { filter: costly(21, 20) });
    expect(grown.status).toBe(409);
    expect(grown.body.error.details[0]).toMatchObject({ field: 'filter', code: 'too_costly' });
    expect((await stack.api.patch(`/webhooks/${fits}`, { filter: costly(19, 20) })).status).toBe(200);
    // Removing a filter, or changing what it applies to, is never refused.
    expect((await stack.api.patch(`/webhooks/${first}`, { event_types: ['api_key.revoked', 'api_key.created'] })).status).toBe(200);
    expect((await stack.api.patch(`/webhooks/${fits}`, { filter: null })).status).toBe(200);
    await deleteAll();
    expect((await stack.api.post('/webhooks', { name: 'room again', url: (await receiver()).url, filter: costly(50, 20) })).status).toBe(201);
    await deleteAll();
  });

  it('bounds one filter to 8,192 bytes and needles of 256 characters on POST and PATCH, and keeps an older oversized one working', async () => {
    const bigFilter = { 'data.key_id': { $nin: needles(40, 250) } };
    expect(Buffer.byteLength(JSON.stringify(bigFilter))).toBeGreaterThan(8192);
    const longNeedle = { 'data.key_id': { $contains: 'n'.repeat(257) } };
    const url = (await receiver()).url;
    for (const [filter, code, field] of [
      [bigFilter, 'too_large', 'filter'],
      [longNeedle, 'too_long', 'filter.data.key_id.$contains'],
    ] as const) {
      const posted = await stack.api.post('/webhooks', { name: 'oversized', url, event_types: ['api_key.revoked'], filter });
      expect(posted.status).toBe(400);
      expect(posted.body.error).toMatchObject({ code: 'validation_failed', details: [expect.objectContaining({ field, code })] });
    }
    const ok = { 'data.key_id': { $contains: 'n'.repeat(256) } };
    const id = await subscribe({ event_types: ['api_key.revoked'], filter: ok });
    for (const [filter, code] of [
      [bigFilter, 'too_large'],
      [longNeedle, 'too_long'],
    ] as const) {
      const patched = await stack.api.patch(`/webhooks/${id}`, { filter });
      expect(patched.status).toBe(400);
      expect(patched.body.error.details).toEqual([expect.objectContaining({ code })]);
    }

    // A filter stored by a release before these limits: a long needle, and more than 8,192 bytes.
    const old = { 'data.key_id': { $contains: 'b'.repeat(300) }, $or: [{ 'data.key_id': { $nin: needles(40, 250) } }] };
    expect(Buffer.byteLength(JSON.stringify(old))).toBeGreaterThan(8192);
    await pg.query(`UPDATE webhooks.subscriptions SET filter = $2::jsonb, cursor_revision = cursor_revision + 1 WHERE id = $1`, [id, JSON.stringify(old)]);
    const retyped = await stack.api.patch(`/webhooks/${id}`, { event_types: ['api_key.revoked', 'api_key.created'] });
    expect(retyped.status).toBe(200);
    expect(retyped.body.data.filter).toEqual(old);
    // And it still screens: of two revocations, the one whose key id holds the long needle is delivered.
    const hook = receivers[receivers.length - 1];
    const kept = `${'b'.repeat(300)}-${randomBytes(4).toString('hex')}`;
    const suffix = String(Date.now() % 1e9);
    await pg.query('BEGIN');
    await pg.query(`SELECT pg_advisory_xact_lock(hashtext('crm:webhooks:event-insert'))`);
    for (const [n, keyId] of [
      ['1', 'dropped'],
      ['2', kept],
    ]) {
      const id = `evt_${`${n}${suffix}`.padStart(26, '0')}`;
      const body = JSON.stringify({
        id,
        type: 'api_key.revoked',
        occurred_at: new Date().toISOString(),
        actor: null,
        via: null,
        request_id: null,
        data: { key_id: keyId },
      });
      await pg.query(`INSERT INTO webhooks.webhook_events (id, type, body) VALUES ($1, 'api_key.revoked', $2)`, [id, body]);
    }
    await pg.query('COMMIT');
    const got = await eventually(async () => (hook.requests.length ? hook.requests : undefined), 120_000);
    expect(got.map((r) => r.json.data.key_id)).toEqual([kept]);
  });
});
