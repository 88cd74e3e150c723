import { Client } from 'pg';
import { startStack, TestStack } from '../support/stack';

describe('Dead events in a service health check', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['deals'] });
  });
  afterAll(() => stack?.stop());

  it('reports the parked count per consumer and stays up while events are parked', async () => {
    const health = async () => (await (await fetch(stack.services.deals!.healthUrl)).json()) as { status: string; details: Record<string, any> };
    const clean = await health();
    expect(clean.status).toBe('ok');
    const consumers = clean.details.dead_events.consumers as Record<string, number>;
    expect(Object.keys(consumers).length).toBeGreaterThan(0);
    expect(clean.details.dead_events).toEqual({ status: 'up', parked: 0, consumers });

    const [consumer] = Object.keys(consumers);
    const pg = new Client({ connectionString: stack.databaseUrl });
    await pg.connect();
    try {
      await pg.query(
        `INSERT INTO deals.dead_events (consumer, event_id, event_type, event, error, attempts)
         VALUES ($1, 'evt_x', 'deal.deleted', '{"id":"evt_x","type":"deal.deleted","occurred_at":"2030-01-01T00:00:00.000Z","data":{}}', 'Error: boom', 5)`,
        [consumer],
      );
    } finally {
      await pg.end();
    }
    const parked = await health();
    expect(parked.status).toBe('ok');
    expect(parked.details.dead_events).toEqual({ status: 'up', parked: 1, consumers: { ...consumers, [consumer]: 1 } });
    const metrics = await (await fetch(stack.services.deals!.healthUrl.replace(/\/health$/, '/metrics'))).text();
    expect(metrics).toContain(`crm_dead_events{consumer="${consumer}"} 1`);
  });
});
