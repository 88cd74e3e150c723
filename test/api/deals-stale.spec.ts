import { DomainEvent, eventSubject, eventSubjectWildcard } from '@crm/contracts';
import { ensureEventStream } from '@crm/messaging';
import { randomUUID } from 'crypto';
import { connect, JSONCodec, NatsConnection } from 'nats';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const STALE_AFTER_SECONDS = 2;

describe('Stale deals trigger', () => {
  let stack: TestStack;
  let nc: NatsConnection;
  const events: DomainEvent[] = [];
  let pipeline: { id: string; stages: Array<{ id: string }> };

  beforeAll(async () => {
    stack = await startStack({
      env: { DEALS_STALE_AFTER_SECONDS: String(STALE_AFTER_SECONDS), DEALS_STALE_CHECK_INTERVAL_MS: '200' },
    });
    // A second replica of the deals service sweeps too: the advisory lock must keep reports single.
    await stack.startService('deals');
    nc = await connect({ servers: stack.env.NATS_URL });
    const codec = JSONCodec<DomainEvent>();
    nc.subscribe(eventSubjectWildcard(stack.namespace), { callback: (_err, msg) => events.push(codec.decode(msg.data)) });
    await nc.flush();
    pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Sales',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
  });
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  const staleFor = (dealId: string) => events.filter((e) => e.type === 'trigger.deal.stale' && e.data.deal_id === dealId);

  /**
   * The positive signal that sweeps ran after this moment: a deal created now is reported once it has
   * been quiet for the threshold, so every sweep in between also looked at the deals under test.
   */
  async function sweptPast(): Promise<void> {
    const sentinel = (await stack.api.post('/deals', { name: 'Sentinel', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data;
    await eventually(async () => (staleFor(sentinel.id).length ? true : undefined));
  }

  async function publishActivity(dealId: string, occurredAt: Date): Promise<void> {
    await ensureEventStream(nc, stack.namespace);
    const event = {
      id: `evt_${randomUUID()}`,
      type: 'activity.created',
      occurred_at: new Date().toISOString(),
      data: { activity_id: `act_${randomUUID()}`, type: 'email', contact_id: null, deal_id: dealId, occurred_at: occurredAt.toISOString() },
    };
    await nc.jetstream().publish(eventSubject(stack.namespace, 'activity.created'), JSONCodec().encode(event), { msgID: event.id });
  }

  it('reports an inactive deal once, and again only after new activity and a new crossing', async () => {
    const deal = (await stack.api.post('/deals', { name: 'Quiet', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data;
    const closed = (await stack.api.post('/deals', { name: 'Done', pipeline_id: pipeline.id, stage_id: pipeline.stages[1].id })).body.data;

    const [first] = await eventually(async () => (staleFor(deal.id).length ? staleFor(deal.id) : undefined));
    expect(first.data).toMatchObject({ deal_id: deal.id, last_activity_at: deal.created_at });
    await sweptPast();
    expect(staleFor(deal.id)).toHaveLength(1);
    // Won and lost deals are never reported.
    expect(staleFor(closed.id)).toHaveLength(0);

    // Activity that is itself older than the threshold is not a new crossing.
    await publishActivity(deal.id, new Date(Date.now() - 60_000));
    await eventually(async () => ((await stack.api.get(`/deals/${deal.id}`)).body.data.last_activity_at ? true : undefined));
    await sweptPast();
    expect(staleFor(deal.id)).toHaveLength(1);

    // Fresh activity resets the clock; once it runs out again, one more report.
    const activityAt = new Date();
    await publishActivity(deal.id, activityAt);
    await eventually(async () => ((await stack.api.get(`/deals/${deal.id}`)).body.data.last_activity_at === activityAt.toISOString() ? true : undefined));
    const reports = await eventually(async () => (staleFor(deal.id).length >= 2 ? staleFor(deal.id) : undefined));
    expect(reports[1].data).toMatchObject({ deal_id: deal.id, last_activity_at: activityAt.toISOString() });
    await sweptPast();
    expect(staleFor(deal.id)).toHaveLength(2);
  });
});
