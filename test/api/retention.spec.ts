import { RetentionJob } from '@crm/runtime';
import { ulid } from 'ulid';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * Each service's RetentionJob deletes what its tables declare past their setting (docs/deployment.md,
 * "Retention"): rows older than the window go, in batches, newer ones and the ones a keep rule protects stay.
 */
describe('retention', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      services: ['contacts', 'webhooks'],
      env: {
        // Sweeps often, in batches of 7, so the 45 rows to delete take several.
        WEBHOOKS_RETENTION_INTERVAL_MS: '200',
        WEBHOOKS_RETENTION_BATCH_SIZE: '7',
        CHANGES_RETENTION_INTERVAL_MS: '200',
        CHANGES_RETENTION_BATCH_SIZE: '7',
        WEBHOOKS_EVENT_RETENTION_DAYS: '2',
        IMPORTS_RETENTION_DAYS: '2',
      },
    });
  });
  afterAll(() => stack?.stop());

  const count = async (sql: string) => Number((await stack.services.contacts!.dataSource.query(sql))[0].n);

  it('shrinks the webhooks event copies and finished imports to their windows, keeping what a delivery still needs', async () => {
    const db = stack.services.contacts!.dataSource;
    // The pending deliveries first: a sweep may run at any moment, and must find them with their events.
    await db.query(
      `INSERT INTO webhooks.subscriptions (id, name, url, secret, status, bookmark) VALUES ('s1', 's', 'https://example.com', 'x', 'disabled', 0)`,
    );
    await db.query(
      `INSERT INTO webhooks.deliveries (id, subscription_id, event_id, attempt, status) SELECT 'd' || g, 's1', 'old' || g, 1, 'pending' FROM generate_series(1, 5) g`,
    );
    // 50 event copies 3 days old (past the window), 5 of them with a delivery still pending, 10 from today.
    await db.query(
      `INSERT INTO webhooks.webhook_events (id, type, body, received_at)
       SELECT 'old' || g, 'contact.created', '{}', now() - interval '3 days' FROM generate_series(1, 50) g
       UNION ALL SELECT 'new' || g, 'contact.created', '{}', now() FROM generate_series(1, 10) g`,
    );
    await db.query(
      `INSERT INTO contacts.imports (id, object, format, status, request_context, completed_at)
       VALUES ('i1', 'contacts', 'csv', 'completed', '{}', now() - interval '3 days'),
              ('i2', 'contacts', 'csv', 'completed', '{}', now()),
              ('i3', 'contacts', 'csv', 'running', '{}', now() - interval '3 days')`,
    );
    await eventually(
      async () =>
        (await count(`SELECT count(*) AS n FROM webhooks.webhook_events WHERE received_at < now() - interval '2 days'`)) === 5 &&
        (await count(`SELECT count(*) AS n FROM contacts.imports WHERE id = 'i1'`)) === 0
          ? true
          : undefined,
      120_000,
    ).catch(async (err) => {
      const left = await db.query(
        `SELECT (SELECT count(*) FROM webhooks.webhook_events WHERE received_at < now() - interval '2 days') AS events,
                (SELECT count(*) FROM contacts.imports WHERE id = 'i1') AS imports`,
      );
      throw new Error(`${(err as Error).message}; left: ${JSON.stringify(left)}`);
    });
    expect(await db.query(`SELECT id FROM webhooks.webhook_events WHERE id LIKE 'old%' ORDER BY id`)).toEqual(
      ['old1', 'old2', 'old3', 'old4', 'old5'].map((id) => ({ id })),
    );
    expect(await count(`SELECT count(*) AS n FROM webhooks.webhook_events WHERE id LIKE 'new%'`)).toBe(10);
    expect((await db.query(`SELECT id FROM contacts.imports ORDER BY id`)).map((r: { id: string }) => r.id)).toEqual(['i2', 'i3']);
    const webhooksJob = stack.services.webhooks!.app.get(RetentionJob);
    expect(webhooksJob.removed.get('webhook_events')).toBe(45);
    expect(stack.services.contacts!.app.get(RetentionJob).removed.get('imports')).toBe(1);
    expect(webhooksJob.removed.size).toBe(1);
  });

  it('answers a replay from an event the webhooks copies no longer keep with 410 cursor_expired, an unknown recent one with 404', async () => {
    const db = stack.services.contacts!.dataSource;
    // An event made, and received, 3 days ago: past the 2 days' window.
    const old = `evt_${ulid(Date.now() - 3 * 86_400_000).toLowerCase()}`;
    await db.query(`INSERT INTO webhooks.webhook_events (id, type, body, received_at) VALUES ($1, 'contact.created', '{}', now() - interval '3 days')`, [old]);
    await eventually(async () => ((await count(`SELECT count(*) AS n FROM webhooks.webhook_events WHERE id = '${old}'`)) === 0 ? true : undefined), 60_000);

    const hook = await stack.api.post('/webhooks', { name: 'replay-expired', url: 'https://example.com/hook', event_types: ['contact.created'] });
    expect(hook.status).toBe(201);
    const expired = await stack.api.post(`/webhooks/${hook.body.data.id}/replay`, { event_id: old });
    expect(expired.status).toBe(410);
    expect(expired.body.error).toMatchObject({ code: 'cursor_expired', details: [{ field: 'event_id', code: 'cursor_expired' }] });
    const unknown = await stack.api.post(`/webhooks/${hook.body.data.id}/replay`, { event_id: `evt_${ulid().toLowerCase()}` });
    expect(unknown.status).toBe(404);
  });
});
