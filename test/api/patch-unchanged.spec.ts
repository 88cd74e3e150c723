import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/**
 * A PATCH that re-sends what is stored (objects in another key order, instants in another spelling)
 * writes nothing and emits nothing, for every resource with a PATCH route. Each case then sends a real
 * change as a sentinel and waits for its event, so "no event" is checked against a log known to be
 * caught up rather than after a pause.
 */
interface Case {
  resource: string;
  /** Creates the resource; answers its path and its body as created. */
  create(): Promise<{ path: string; body: Record<string, any> }>;
  /** The same values again, spelled differently where the API allows it. */
  same(body: Record<string, any>): Record<string, unknown>;
  /** A real change, and the field its event reports. */
  sentinel: { body: Record<string, unknown>; changed: string };
  /** The update event and the data key naming the resource; absent where updates emit no event. */
  event?: { type: string; idKey: string };
}

const tag = () => randomBytes(4).toString('hex');
const reversed = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).reverse());

describe('PATCH with identical values', () => {
  let stack: TestStack;
  let pipeline: Record<string, any>;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    const stages = [
      { name: 'New', type: 'open' },
      { name: 'Won', type: 'won' },
      { name: 'Lost', type: 'lost' },
    ];
    pipeline = (await stack.api.post('/pipelines', { name: 'Base', stages })).body.data;
  });
  afterAll(() => stack?.stop());

  const created = async (path: string, body: Record<string, unknown>) => {
    const res = await stack.api.post(path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
    return res.body.data as Record<string, any>;
  };

  const meta = { b: { y: 2, x: [1, 'two'] }, a: 'one', n: 1.5 };

  const cases: Case[] = [
    {
      resource: 'contact',
      create: async () => {
        const c = await created('/contacts', { email: `same.${tag()}@example.com`, first_name: 'Ada', last_name: 'Lovelace', metadata: meta });
        return { path: `/contacts/${c.id}`, body: c };
      },
      same: (c) => ({ email: c.email, first_name: c.first_name, last_name: c.last_name, metadata: reversed(c.metadata) }),
      sentinel: { body: { first_name: 'Augusta' }, changed: 'first_name' },
      event: { type: 'contact.updated', idKey: 'contact_id' },
    },
    {
      resource: 'company',
      create: async () => {
        const c = await created('/companies', { name: 'Initech', domain: `${tag()}.example.com`, metadata: meta });
        return { path: `/companies/${c.id}`, body: c };
      },
      same: (c) => ({ name: c.name, domain: c.domain, metadata: reversed(c.metadata) }),
      sentinel: { body: { name: 'Initrode' }, changed: 'name' },
      event: { type: 'company.updated', idKey: 'company_id' },
    },
    {
      resource: 'activity',
      create: async () => {
        const a = await created('/activities', { type: 'meeting', subject: 'Kick-off', occurred_at: '2030-04-01T09:30:00Z', metadata: meta });
        return { path: `/activities/${a.id}`, body: a };
      },
      same: (a) => ({ subject: a.subject, occurred_at: '2030-04-01T09:30:00.000Z', metadata: reversed(a.metadata) }),
      sentinel: { body: { subject: 'Follow-up' }, changed: 'subject' },
      event: { type: 'activity.updated', idKey: 'activity_id' },
    },
    {
      resource: 'task',
      create: async () => {
        const t = await created('/tasks', { title: 'Call back', due_at: '2030-05-01T12:00:00Z', metadata: meta });
        return { path: `/tasks/${t.id}`, body: t };
      },
      same: (t) => ({ title: t.title, due_at: '2030-05-01T12:00:00.000Z', status: t.status, metadata: reversed(t.metadata) }),
      sentinel: { body: { title: 'Call again' }, changed: 'title' },
      event: { type: 'task.updated', idKey: 'task_id' },
    },
    {
      resource: 'deal',
      create: async () => {
        const d = await created('/deals', {
          name: 'Acme renewal',
          pipeline_id: pipeline.id,
          stage_id: pipeline.stages[0].id,
          value: 120000,
          currency: 'EUR',
          expected_close: '2030-06-01T00:00:00Z',
          metadata: meta,
        });
        return { path: `/deals/${d.id}`, body: d };
      },
      same: (d) => ({
        name: d.name,
        value: d.value,
        currency: d.currency,
        status: d.status,
        expected_close: '2030-06-01T00:00:00.000Z',
        metadata: reversed(d.metadata),
      }),
      sentinel: { body: { value: 130000 }, changed: 'value' },
      event: { type: 'deal.updated', idKey: 'deal_id' },
    },
    {
      resource: 'pipeline',
      create: async () => {
        const p = await created('/pipelines', { name: `P ${tag()}`, stages: [{ name: 'Open', type: 'open' }], metadata: meta });
        return { path: `/pipelines/${p.id}`, body: p };
      },
      same: (p) => ({ name: p.name, is_default: p.is_default, metadata: reversed(p.metadata) }),
      sentinel: { body: { name: `Renamed ${tag()}` }, changed: 'name' },
      event: { type: 'pipeline.updated', idKey: 'pipeline_id' },
    },
    {
      resource: 'object type',
      create: async () => {
        const o = await created('/objects', {
          name: 'Project',
          slug: `project_${tag()}`,
          enforcement_level: 'soft',
          fields: [{ name: 'title', type: 'string' }],
        });
        return { path: `/objects/${o.slug}`, body: o };
      },
      same: (o) => ({ name: o.name, enforcement_level: o.enforcement_level, status: o.status }),
      sentinel: { body: { name: 'Client project' }, changed: 'name' },
      event: { type: 'object_type.updated', idKey: 'object_type_id' },
    },
    {
      resource: 'object record',
      create: async () => {
        const o = await created('/objects', {
          name: 'Site',
          slug: `site_${tag()}`,
          fields: [
            { name: 'title', type: 'string' },
            { name: 'tags', type: 'array', items: { type: 'string' } },
            { name: 'size', type: 'number' },
          ],
        });
        const r = await created(`/objects/${o.slug}/records`, { values: { title: 'Roof', tags: ['a', 'b'], size: 12.5 } });
        return { path: `/objects/${o.slug}/records/${r.id}`, body: r };
      },
      same: (r) => ({ values: reversed(r.values) }),
      sentinel: { body: { values: { title: 'Walls' } }, changed: 'title' },
      event: { type: 'object_record.updated', idKey: 'record_id' },
    },
    {
      resource: 'webhook (updates emit no event)',
      create: async () => {
        const w = await created('/webhooks', { name: 'sync', url: 'http://127.0.0.1:9/hook', event_types: ['deal.won', 'deal.lost'], metadata: meta });
        return { path: `/webhooks/${w.id}`, body: w };
      },
      same: (w) => ({ name: w.name, url: w.url, status: w.status, event_types: w.event_types, metadata: reversed(w.metadata) }),
      sentinel: { body: { name: 'sync 2' }, changed: 'name' },
    },
  ];

  it.each(cases.map((c) => [c.resource, c] as const))('%s: keeps updated_at and emits no update event', async (_name, c) => {
    const { path } = await c.create();
    const stored = (await stack.api.get(path)).body.data;
    // Ensures a write would land on a later clock reading than the stored updated_at.
    await eventually(async () => (Date.now() > Date.parse(stored.updated_at) + 5 ? true : undefined));

    const again = await stack.api.patch(path, c.same(stored));
    expect(again.status).toBe(200);
    expect(again.body.data.updated_at).toBe(stored.updated_at);
    expect((await stack.api.get(path)).body.data).toEqual(stored);

    const changed = await stack.api.patch(path, c.sentinel.body);
    expect(changed.status).toBe(200);
    expect(Date.parse(changed.body.data.updated_at)).toBeGreaterThan(Date.parse(stored.updated_at));
    if (!c.event) return;

    const { type, idKey } = c.event;
    const id = stored.id;
    const updates = await eventually(async () => {
      const events = (await stack.api.listAll(`/events?type=${type}`)).filter((e) => e.data[idKey] === id);
      return events.some((e) => e.data.changed.includes(c.sentinel.changed)) ? events : undefined;
    });
    expect(updates).toHaveLength(1);
    expect(updates[0].data.changed).toEqual([c.sentinel.changed]);
  });
});
