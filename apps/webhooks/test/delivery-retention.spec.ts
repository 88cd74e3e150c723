import { eventually, startStack, TestStack } from '@crm/test-support';
import { randomBytes } from 'crypto';
import { DeliveryRetentionJob } from '../src/deliveries/delivery-retention.job';

const BATCH = 100;

/**
 * The periodic retention sweep: delivery attempts past WEBHOOKS_DELIVERY_RETENTION_DAYS go, in batches of at
 * most WEBHOOKS_RETENTION_BATCH_SIZE; younger ones stay. Waits on the job's own counters, never on time.
 */
describe('webhook delivery log retention', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      env: {
        WEBHOOKS_ALLOW_INSECURE: 'true',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_RETENTION_INTERVAL_MS: '200',
        WEBHOOKS_RETENTION_BATCH_SIZE: String(BATCH),
      },
    });
  });
  afterAll(() => stack?.stop());

  const job = () => stack.services.webhooks!.app.get(DeliveryRetentionJob);
  const db = () => stack.services.webhooks!.dataSource;

  it('deletes attempts older than 30 days in bounded batches and keeps the rest', async () => {
    const created = await stack.api.post('/webhooks', { name: 'old log', url: 'http://127.0.0.1:9/x', event_types: ['deal.won'] });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await stack.api.patch(`/webhooks/${id}`, { status: 'paused' });
    const before = { ...job().totals };

    // 450 attempts from 31 to 40 days ago, 20 from 29 days ago, 5 from today.
    await db().query(
      `INSERT INTO deliveries (id, subscription_id, event_id, attempt, status, http_status, duration_ms, created_at)
       SELECT 'whd_' || lpad(n::text, 26, '0'), $1, 'evt_' || lpad(n::text, 26, '0'), 1, 'failed', 500, 3,
              now() - make_interval(days => CASE WHEN n <= 450 THEN 31 + n % 10 WHEN n <= 470 THEN 29 ELSE 0 END)
       FROM generate_series(1, 475) AS n`,
      [id],
    );

    const totals = await eventually(async () => (job().totals.deliveriesRemoved - before.deliveriesRemoved >= 450 ? { ...job().totals } : undefined));
    expect(totals.deliveriesRemoved - before.deliveriesRemoved).toBe(450);
    expect(totals.batches - before.batches).toBeGreaterThanOrEqual(Math.ceil(450 / BATCH));
    expect(totals.largestBatch).toBeLessThanOrEqual(BATCH);

    const kept = await stack.api.listAll(`/webhooks/${id}/deliveries`);
    expect(kept).toHaveLength(25);
    const oldest = Math.min(...kept.map((d) => Date.parse(d.created_at)));
    expect(Date.now() - oldest).toBeLessThan(30 * 86_400_000);
  });

  it('clears a previous signing secret once its overlap is over', async () => {
    const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
    const created = await stack.api.post('/webhooks', { name: 'rotated', url: 'http://127.0.0.1:9/x', secret: secret(), event_types: ['deal.won'] });
    const id = created.body.data.id;
    expect((await stack.api.patch(`/webhooks/${id}`, { secret: secret() })).status).toBe(200);
    const [{ kept }] = await db().query(`SELECT previous_secret IS NOT NULL AS kept FROM subscriptions WHERE id = $1`, [id]);
    expect(kept).toBe(true);
    // As if the 24-hour overlap had passed.
    await db().query(`UPDATE subscriptions SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    await eventually(async () => {
      const [row] = await db().query(`SELECT previous_secret, previous_secret_expires_at FROM subscriptions WHERE id = $1`, [id]);
      return row.previous_secret === null && row.previous_secret_expires_at === null ? true : undefined;
    }, 120_000);
    expect(job().totals.previousSecretsCleared).toBeGreaterThanOrEqual(1);
  });
});
