import { randomUUID } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * Filtered subscriptions that share a filter, few delivery slots, an endpoint that stops answering for a
 * while, and events arriving in bursts: each subscription still receives every event its filter holds for.
 * While the endpoint hangs, events pile up, so the screen tests batches that run across positions of more
 * digits (9 to 10 and on): sorted as text they once put a later event first and skipped earlier matches.
 */
describe('Webhook filters under contention', () => {
  const SUBSCRIPTIONS = 12;
  let stack: TestStack;
  const receivers: Receiver[] = [];
  let answering = false;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        WEBHOOKS_ALLOW_INSECURE: 'true',
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
        WEBHOOKS_MAX_CONCURRENCY: '3',
        WEBHOOKS_TIMEOUT_MS: '300',
        WEBHOOKS_RETRY_SCHEDULE_MS: Array.from({ length: 20 }, () => '100').join(','),
        WEBHOOKS_DISABLE_AFTER_FAILED_EVENTS: '1000',
      },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  it('delivers every matching event to every subscription while the endpoint times out', async () => {
    const filter = { 'actor.type': 'api_key', via: { $in: ['api', 'batch'] }, 'data.email': { $starts_with: 'hit-' } };
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const receiver = await Receiver.start(() => (answering ? 204 : 'hang'));
      receivers.push(receiver);
      const res = await stack.api.post('/webhooks', { name: `s${i}`, url: receiver.url, event_types: ['contact.created'], filter });
      if (res.status !== 201) throw new Error(`POST /webhooks answered ${res.status}: ${res.text}`);
    }
    const write = async (prefix: string) => {
      const res = await stack.api.post('/contacts', { email: `${prefix}-${randomUUID()}@load.example` });
      if (res.status !== 201) throw new Error(`POST /contacts answered ${res.status}: ${res.text}`);
      return res.body.data.email as string;
    };
    for (let i = 0; i < 5; i++) await write('miss');
    const hits: string[] = [];
    for (let round = 0; round < 3; round++) {
      const burst = await Promise.all([write('hit'), ...Array.from({ length: 15 }, () => write('miss'))]);
      hits.push(burst[0]);
    }
    setTimeout(() => (answering = true), 3_000);
    const missing = () => receivers.map((r) => hits.filter((h) => !r.requests.some((q) => q.json.data.email === h)).length);
    await eventually(async () => (missing().every((n) => n === 0) ? true : undefined), 120_000, 200).catch(() => undefined);
    expect(missing()).toEqual(receivers.map(() => 0));
    // A last matching write after every other: once each subscription has it, each has been offered every
    // earlier event in order, so a miss its filter let through would be among what arrived.
    const last = await write('hit');
    await eventually(async () => (receivers.every((r) => r.requests.some((q) => q.json.data.email === last)) ? true : undefined), 120_000, 200);
    // Nothing the filter drops arrived.
    expect(receivers.flatMap((r) => r.requests.map((q) => String(q.json.data.email).split('-')[0]))).not.toContain('miss');
  }, 300_000);
});
