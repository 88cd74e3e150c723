import { eventStreamName } from '@crm/contracts';
import { connect } from 'nats';
import { eventually } from '../support/api-client';
import { startNatsCluster } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

/** On a NATS cluster, the event stream is kept in JETSTREAM_REPLICAS copies. */
describe('the event stream on a NATS cluster', () => {
  let cluster: Awaited<ReturnType<typeof startNatsCluster>>;
  let stack: TestStack | undefined;
  beforeAll(async () => {
    cluster = await startNatsCluster();
  });
  afterAll(async () => {
    await stack?.stop();
    await cluster?.stop();
  });

  it('is created with three replicas when JETSTREAM_REPLICAS=3, and events flow through it', async () => {
    // The cluster needs a moment to elect its JetStream leader; the stack's start-up retries until then.
    stack = await eventually(
      () => startStack({ services: ['events'], env: { NATS_URL: cluster.url, JETSTREAM_REPLICAS: '3' } }).catch(() => undefined),
      120_000,
      500,
    );
    const key = await stack.api.post('/apikeys', { name: 'clustered', scope: 'read' });
    expect(key.status).toBe(201);
    await eventually(async () => {
      const events = (await stack!.api.get('/events?type=api_key.created')).body.data as Array<{ data: { key_id: string } }>;
      return events.some((e) => e.data.key_id === key.body.data.id) ? true : undefined;
    }, 120_000);
    const nc = await connect({ servers: cluster.url });
    try {
      const info = await (await nc.jetstreamManager()).streams.info(eventStreamName(stack.namespace));
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas).toHaveLength(2);
    } finally {
      await nc.close();
    }
  });
});
