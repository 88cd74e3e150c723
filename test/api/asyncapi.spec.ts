import { Parser } from '@asyncapi/parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'fs';
import { connect, NatsConnection, StringCodec, Subscription } from 'nats';
import { join } from 'path';
import { describeEventsOffline } from '../../apps/gateway/src/gateway.app';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const committed = () => readFileSync(join(__dirname, '../../docs/asyncapi.json'), 'utf8');
type AsyncApi = { channels: Record<string, { address: string; messages: Record<string, { $ref: string }> }>; components: Record<string, any> };

describe('the AsyncAPI document of the events on NATS', () => {
  it('is generated from the event catalogue and committed as docs/asyncapi.json (npm run sdk)', async () => {
    expect(committed()).toBe(`${JSON.stringify(await describeEventsOffline(), null, 2)}\n`);
  });

  it('is valid AsyncAPI 3.0 by the reference parser, which does find errors', async () => {
    const parser = new Parser();
    const errors = async (text: string) =>
      (await parser.parse(text)).diagnostics.filter((d) => d.severity === 0).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`);
    expect(await errors(committed())).toEqual([]);
    expect((await errors(committed().replace('"#/components/messages/dealWon"', '"#/components/messages/noSuchMessage"'))).length).toBeGreaterThan(0);
  });

  describe('against what a running stack publishes', () => {
    let stack: TestStack;
    let nc: NatsConnection;
    let subscription: Subscription;
    const received: Array<{ subject: string; event: any }> = [];
    beforeAll(async () => {
      stack = await startStack();
      nc = await connect({ servers: stack.env.NATS_URL });
      const codec = StringCodec();
      subscription = nc.subscribe(`${stack.namespace}.events.>`);
      void (async () => {
        for await (const message of subscription) received.push({ subject: message.subject, event: JSON.parse(codec.decode(message.data)) });
      })();
      await nc.flush();
    });
    afterAll(async () => {
      await nc?.drain();
      await stack?.stop();
    });

    it('is served at GET /asyncapi.json as committed, without a key and with one, outside the rate limit', async () => {
      for (const key of [null, stack.apiKey]) {
        const res = await stack.api.get('/asyncapi.json', { key });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('application/json');
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
        expect(res.body).toEqual(JSON.parse(committed()));
      }
    });

    it('describes every event a walkthrough of the API produces, on the documented subject', async () => {
      const api = stack.api;
      const ok = async (res: Promise<{ status: number; body: any; text: string }>) => {
        const r = await res;
        if (r.status >= 300) throw new Error(`${r.status}: ${r.text}`);
        return r.body?.data;
      };
      const contact = await ok(api.post('/contacts', { email: 'events@example.com', first_name: 'Eve' }));
      await ok(api.patch(`/contacts/${contact.id}`, { title: 'CTO' }));
      const other = await ok(api.post('/contacts', { email: 'other@example.com' }));
      await ok(api.post('/contacts/merge', { winner_id: contact.id, loser_id: other.id }));
      const company = await ok(api.post('/companies', { name: 'Acme', domain: 'acme.example' }));
      await ok(api.patch(`/companies/${company.id}`, { industry: 'tools' }));
      const pipeline = await ok(
        api.post('/pipelines', {
          name: 'Sales',
          stages: [
            { name: 'Open', type: 'open' },
            { name: 'Won', type: 'won' },
            { name: 'Lost', type: 'lost' },
          ],
        }),
      );
      const [open, won, lost] = pipeline.stages;
      await ok(api.patch(`/pipelines/${pipeline.id}`, { name: 'Sales EU' }));
      const deal = await ok(
        api.post('/deals', { name: 'Pilot', pipeline_id: pipeline.id, stage_id: open.id, contact_id: contact.id, value: 5000, currency: 'EUR' }),
      );
      await ok(api.patch(`/deals/${deal.id}`, { name: 'Pilot 2' }));
      await ok(api.post(`/deals/${deal.id}/stage`, { stage_id: won.id }));
      const second = await ok(api.post('/deals', { name: 'Second', pipeline_id: pipeline.id, stage_id: open.id }));
      await ok(api.post(`/deals/${second.id}/stage`, { stage_id: lost.id }));
      await ok(api.delete(`/deals/${second.id}`));
      const activity = await ok(api.post('/activities', { type: 'call', contact_id: contact.id }));
      await ok(api.patch(`/activities/${activity.id}`, { subject: 'Intro' }));
      await ok(api.delete(`/activities/${activity.id}`));
      const task = await ok(api.post('/tasks', { title: 'Follow up', deal_id: deal.id }));
      await ok(api.patch(`/tasks/${task.id}`, { status: 'completed' }));
      await ok(api.delete(`/tasks/${task.id}`));
      await ok(api.post('/objects', { name: 'Project', slug: 'project', fields: [{ name: 'title', type: 'string' }] }));
      const record = await ok(api.post('/objects/project/records', { values: { title: 'Apollo' } }));
      await ok(api.patch(`/objects/project/records/${record.id}`, { values: { title: 'Gemini' } }));
      await ok(api.delete(`/objects/project/records/${record.id}`));
      const key = await ok(api.post('/apikeys', { name: 'temporary', scope: 'read' }));
      await ok(api.delete(`/apikeys/${key.id}`));
      await ok(api.delete(`/companies/${company.id}`));
      await ok(api.delete(`/contacts/${contact.id}`));
      await ok(api.delete(`/deals/${deal.id}`));
      await ok(api.delete(`/pipelines/${pipeline.id}`));

      const expected = [
        'contact.created',
        'contact.updated',
        'contact.deleted',
        'company.created',
        'company.updated',
        'company.deleted',
        'deal.created',
        'deal.updated',
        'deal.deleted',
        'deal.stage_changed',
        'deal.won',
        'deal.lost',
        'activity.created',
        'activity.updated',
        'activity.deleted',
        'task.created',
        'task.updated',
        'task.deleted',
        'pipeline.created',
        'pipeline.updated',
        'pipeline.deleted',
        'object_type.created',
        'object_record.created',
        'object_record.updated',
        'object_record.deleted',
        'api_key.created',
        'api_key.revoked',
      ];
      await eventually(async () => (expected.every((type) => received.some((r) => r.event.type === type)) ? true : undefined));

      const document = JSON.parse(committed()) as AsyncApi;
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addSchema({ components: document.components }, 'asyncapi');
      const problems: string[] = [];
      for (const { subject, event } of received) {
        const channel = Object.entries(document.channels).find(([, c]) => c.address.replace('{namespace}', stack.namespace) === subject);
        if (!channel) {
          problems.push(`${subject}: no channel`);
          continue;
        }
        const name = channel[1].messages[channel[0]].$ref.split('/').pop()!;
        const validate = ajv.getSchema(`asyncapi#/components/messages/${name}/payload`)!;
        if (!validate(event)) problems.push(`${event.type}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(event.data)}`);
      }
      expect(problems).toEqual([]);
    });
  });
});
