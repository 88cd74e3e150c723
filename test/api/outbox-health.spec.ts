import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * The outbox backlog, in a service's own /health, in the gateway's /health under that service, and as
 * metrics. The backlog is made visible by holding the lock of the contacts relay's lane, as a second
 * replica draining it would, while an event waits: the relay cannot take the lane, so the row stays.
 */
describe('Outbox backlog in health checks', () => {
  let stack: TestStack;
  let pg: Client;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
    pg = new Client({ connectionString: stack.databaseUrl });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await stack?.stop();
  });

  const serviceHealth = async () => (await (await fetch(stack.services.contacts!.healthUrl)).json()) as { details: Record<string, any> };
  const gatewayHealth = async () => ({ body: (await (await fetch(stack.gateway.healthUrl)).json()) as { details: Record<string, any> } });

  it('reports the rows waiting and the age of the oldest, and stays up while events wait', async () => {
    expect((await serviceHealth()).details.outbox).toEqual({ status: 'up', pending: 0, oldest_age_seconds: 0 });
    const gateway = await gatewayHealth();
    expect(gateway.body.details.outbox).toEqual({ status: 'up', pending: expect.any(Number), oldest_age_seconds: expect.any(Number) });
    expect(gateway.body.details.contacts).toEqual({ status: 'up', outbox: { pending: 0, oldest_age_seconds: 0 } });

    await pg.query(`SELECT pg_advisory_lock(hashtext('crm:outbox:contacts'))`);
    try {
      await pg.query(
        `INSERT INTO contacts.outbox (event_id, type, payload, created_at)
         VALUES ('evt_health_backlog', 'contact.deleted', '{"id":"evt_health_backlog","type":"contact.deleted","occurred_at":"2030-01-01T00:00:00.000Z","data":{"contact_id":"cont_health"}}', now() - interval '90 seconds')`,
      );
      const waiting = (await serviceHealth()).details.outbox;
      expect(waiting).toMatchObject({ status: 'up', pending: 1 });
      expect(waiting.oldest_age_seconds).toBeGreaterThanOrEqual(90);
      const viaGateway = await gatewayHealth();
      expect(viaGateway.body.details.contacts.outbox.pending).toBe(1);
      expect(viaGateway.body.details.contacts.outbox.oldest_age_seconds).toBeGreaterThanOrEqual(90);
      const metrics = await (await fetch(stack.services.contacts!.healthUrl.replace(/\/health$/, '/metrics'))).text();
      expect(metrics).toMatch(/^crm_outbox_pending 1$/m);
      expect(Number(/^crm_outbox_oldest_age_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(90);
    } finally {
      await pg.query(`SELECT pg_advisory_unlock(hashtext('crm:outbox:contacts'))`);
    }
    // Let go, the relay publishes it and the backlog is gone.
    await eventually(async () => ((await serviceHealth()).details.outbox.pending === 0 ? true : undefined));
  });
});
