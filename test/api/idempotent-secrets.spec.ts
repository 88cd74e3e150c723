import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { ApiResponse, eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Answers that carry a secret shown once (a new API key, a webhook's signing secret) are not kept for
 * Idempotency-Key replay, neither by the gateway nor in the webhooks service's request outcomes: a retry
 * is told the first request succeeded and the secret cannot be shown again (docs/api.md, "Idempotency").
 */
describe('secrets are not stored for idempotent replay', () => {
  let stack: TestStack;
  let db: Client;
  let n = 0;
  const key = () => `secret-${Date.now()}-${n++}`;
  const withKey = (k: string) => ({ headers: { 'Idempotency-Key': k } });

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'], env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  /**
   * Everything the gateway keeps for `k`, as text, once it has stored the answer: it stores it after the
   * response has gone out, so a client (and this test) can be answered before the row is written.
   */
  const gatewayRow = (k: string) =>
    eventually(async () => {
      const { rows } = await db.query(
        `SELECT row_to_json(i)::text AS row FROM gateway.idempotency_keys i WHERE idempotency_key = $1 AND response_status IS NOT NULL`,
        [k],
      );
      return rows.length ? rows.map((r) => r.row).join('\n') : undefined;
    });
  /** Everything the webhooks service keeps of its keyed requests, as text. */
  const outcomes = async () =>
    ((await stack.services.webhooks!.dataSource.query(`SELECT row_to_json(o)::text AS row FROM request_outcomes o`)) as Array<{ row: string }>)
      .map((r) => r.row)
      .join('\n');
  const notShownAgain = (res: ApiResponse) => {
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(res.body.error.message).toContain('succeeded');
    expect(res.body.error.message).toContain('cannot be shown again');
  };

  it('keeps no new API key for replay, and answers a retry 409', async () => {
    const k = key();
    const name = `once ${k}`;
    const created = await stack.api.post('/apikeys', { name, scope: 'read' }, withKey(k));
    expect(created.status).toBe(201);
    const secret: string = created.body.data.key;
    const row = await gatewayRow(k);
    expect(row).toContain('409');
    expect(row).not.toContain(secret);
    expect(row).not.toContain(secret.slice(9, 30));

    const retry = await stack.api.post('/apikeys', { name, scope: 'read' }, withKey(k));
    notShownAgain(retry);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).not.toContain(secret);
    const listed = (await stack.api.get('/apikeys?limit=200')).body.data.filter((x: { name: string }) => x.name === name);
    expect(listed).toHaveLength(1);
    // The key made the first time works: only its answer was not kept.
    expect((await stack.api.withKey(secret).get('/webhooks')).status).toBe(200);
  });

  it("still replays a secret route's failure, which carries no secret", async () => {
    const k = key();
    const first = await stack.api.post('/apikeys', { name: 'bad', scope: 'everything' }, withKey(k));
    expect(first.status).toBe(400);
    const again = await stack.api.post('/apikeys', { name: 'bad', scope: 'everything' }, withKey(k));
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([400, 'true']);
    expect(again.body).toEqual(first.body);
  });

  it("keeps no webhook signing secret in the gateway's store nor the service's outcomes, and answers a retry 409", async () => {
    const k = key();
    const body = { name: `once ${k}`, url: 'http://127.0.0.1:9/hook', event_types: ['deal.won'] };
    const created = await stack.api.post('/webhooks', body, withKey(k));
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_/);
    const material = secret.slice('whsec_'.length, 30);
    expect(await outcomes()).not.toContain(material);
    expect(await gatewayRow(k)).not.toContain(material);

    notShownAgain(await stack.api.post('/webhooks', body, withKey(k)));
    const named = (await stack.api.get('/webhooks?limit=100')).body.data.filter((w: { name: string }) => w.name === body.name);
    expect(named).toHaveLength(1);
  });

  it('answers 409 when the gateway lost the answer and the webhooks service recovers the retry', async () => {
    const k = key();
    const body = { name: `recovered ${k}`, url: 'http://127.0.0.1:9/hook', secret: newSecret(), event_types: ['deal.won'] };
    expect((await stack.api.post('/webhooks', body, withKey(k))).status).toBe(201);
    await gatewayRow(k);
    // As a gateway that died after the service committed: no stored answer, the claim lapsed.
    const lost = await db.query(
      `UPDATE gateway.idempotency_keys SET response_status = NULL, response_type = NULL, response_body = NULL, locked_until = now()
        WHERE idempotency_key = $1`,
      [k],
    );
    expect(lost.rowCount).toBe(1);

    const retry = await stack.api.post('/webhooks', body, withKey(k));
    notShownAgain(retry);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.text).not.toContain('whsec_');
    const named = (await stack.api.get('/webhooks?limit=100')).body.data.filter((w: { name: string }) => w.name === body.name);
    expect(named).toHaveLength(1);
    expect(await outcomes()).not.toContain(body.secret.slice('whsec_'.length, 30));
  });

  it('keeps a replaced signing secret out of both stores and replays the PATCH, whose answer has none', async () => {
    const created = await stack.api.post('/webhooks', { name: `rotated ${key()}`, url: 'http://127.0.0.1:9/hook', event_types: ['deal.won'] });
    const k = key();
    const replacement = newSecret();
    const patched = await stack.api.patch(`/webhooks/${created.body.data.id}`, { secret: replacement }, withKey(k));
    expect(patched.status).toBe(200);
    const again = await stack.api.patch(`/webhooks/${created.body.data.id}`, { secret: replacement }, withKey(k));
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    const material = replacement.slice('whsec_'.length, 30);
    expect(await gatewayRow(k)).not.toContain(material);
    expect(await outcomes()).not.toContain(material);
  });
});
