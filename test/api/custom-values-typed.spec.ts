import { startStack, TestStack } from '../support/stack';

/**
 * Custom dates and date-times answer as their type (docs/query.md, docs/aggregate.md): a date-time is kept
 * as the text it was written as, offset and all, and compared, sorted, paged and bucketed as the instant it
 * names; a value that does not parse as its type is null to every comparison.
 */
describe('Custom date and date-time values answer as their type', () => {
  let stack: TestStack;
  let seq = 0;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
    for (const field of [
      { name: 'when', type: 'datetime' },
      { name: 'day', type: 'date' },
    ]) {
      const res = await stack.api.post('/objects/contacts/fields', field);
      if (res.status !== 201) throw new Error(`POST /objects/contacts/fields answered ${res.status}: ${res.text}`);
    }
  });
  afterAll(() => stack.stop());

  async function owner(): Promise<string> {
    const res = await stack.api.post('/users', { name: 'Owner', email: `owner.${Date.now()}.${++seq}@example.com` });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }
  async function contact(ownerId: string, custom: Record<string, unknown>): Promise<string> {
    const res = await stack.api.post('/contacts', { email: `typed.${Date.now()}.${++seq}@example.com`, owner_id: ownerId, custom_fields: custom });
    if (res.status !== 201) throw new Error(`POST /contacts answered ${res.status}: ${res.text}`);
    return res.body.data.id;
  }
  async function ids(body: Record<string, unknown>): Promise<string[]> {
    const res = await stack.api.post('/contacts/query', body);
    if (res.status !== 200) throw new Error(`POST /contacts/query answered ${res.status}: ${res.text}`);
    return res.body.data.map((item: { id: string }) => item.id);
  }

  it('compares and sorts date-times as instants, offsets honoured, and returns them as written', async () => {
    const o = await owner();
    const a = await contact(o, { when: '2026-01-01T00:30:00+01:00' });
    const b = await contact(o, { when: '2025-12-31T23:45:00Z' });
    const before = { $and: [{ owner_id: o }, { 'custom_fields.when': { $lt: '2026-01-01T00:00:00Z' } }] };
    expect((await ids({ filter: before })).sort()).toEqual([a, b].sort());
    expect(await ids({ filter: { owner_id: o }, sort: [{ field: 'custom_fields.when', direction: 'asc' }] })).toEqual([a, b]);
    expect(await ids({ filter: { owner_id: o }, sort: [{ field: 'custom_fields.when', direction: 'desc' }] })).toEqual([b, a]);
    // The same instant written with another offset is equal to it.
    expect(await ids({ filter: { owner_id: o, 'custom_fields.when': '2025-12-31T23:30:00Z' } })).toEqual([a]);
    expect(await ids({ filter: { owner_id: o, 'custom_fields.when': { $in: ['2025-12-31T18:45:00-05:00'] } } })).toEqual([b]);
    expect(await ids({ filter: { owner_id: o, 'custom_fields.when': { $ne: '2025-12-31T23:30:00Z' } } })).toEqual([b]);
    // One per page: the cursor carries the instant, not the text.
    const first = await stack.api.post('/contacts/query', { filter: { owner_id: o }, sort: [{ field: 'custom_fields.when', direction: 'asc' }], limit: 1 });
    expect(first.body.data.map((item: { id: string }) => item.id)).toEqual([a]);
    const second = await stack.api.post('/contacts/query', {
      filter: { owner_id: o },
      sort: [{ field: 'custom_fields.when', direction: 'asc' }],
      limit: 1,
      cursor: first.body.next_cursor,
    });
    expect(second.body.data.map((item: { id: string }) => item.id)).toEqual([b]);
    const shown = await stack.api.post('/contacts/query', {
      filter: { owner_id: o },
      fields: ['custom_fields.when'],
      sort: [{ field: 'custom_fields.when', direction: 'asc' }],
    });
    expect(shown.body.data.map((item: { custom_fields: unknown }) => item.custom_fields)).toEqual([
      { when: '2026-01-01T00:30:00+01:00' },
      { when: '2025-12-31T23:45:00Z' },
    ]);
  });

  it('groups a custom date-time by month in a time zone, buckets named as for built-in date-times, with min and max', async () => {
    const o = await owner();
    // 23:30 UTC on 31 January is 1 February in Berlin; 21:59 UTC on 31 March is 23:59 there (CEST, +02:00), still March.
    await contact(o, { when: '2026-01-31T23:30:00Z' });
    await contact(o, { when: '2026-02-10T08:00:00-08:00' });
    await contact(o, { when: '2026-03-31T21:59:00Z' });
    await contact(o, { when: '2026-04-01T00:30:00+02:00' });
    await contact(o, {});
    const res = await stack.api.post('/contacts/aggregate', {
      filter: { owner_id: o },
      group_by: [{ field: 'custom_fields.when', interval: 'month', time_zone: 'Europe/Berlin' }],
      metrics: { n: { op: 'count' }, first: { op: 'min', field: 'custom_fields.when' }, last: { op: 'max', field: 'custom_fields.when' } },
      sort: [{ group: 'custom_fields.when', direction: 'asc' }],
    });
    expect(res.status).toBe(200);
    expect(
      res.body.data.map((g: { group: Record<string, unknown>; metrics: Record<string, unknown> }) => [g.group['custom_fields.when'], g.metrics.n]),
    ).toEqual([
      ['2026-02-01T00:00:00.000+01:00', 2],
      ['2026-03-01T00:00:00.000+01:00', 1],
      ['2026-04-01T00:00:00.000+02:00', 1],
      [null, 1],
    ]);
    const feb = res.body.data[0].metrics;
    expect({ first: feb.first, last: feb.last }).toEqual({ first: '2026-01-31T23:30:00.000Z', last: '2026-02-10T16:00:00.000Z' });
  });

  it('reads values that do not parse as their type as null, and compares dates as dates', async () => {
    const o = await owner();
    const good = await contact(o, { when: '2026-05-01T10:00:00+02:00', day: '2026-05-01' });
    const patched = await stack.api.patch('/objects/contacts', { enforcement_level: 'none' });
    expect(patched.status).toBe(200);
    let loose: string;
    try {
      loose = await contact(o, { when: '2026-05-01T10:00:00', day: '2026-02-30' });
    } finally {
      await stack.api.patch('/objects/contacts', { enforcement_level: 'hard' });
    }
    expect(await ids({ filter: { owner_id: o, 'custom_fields.when': { $gt: '2000-01-01T00:00:00Z' } } })).toEqual([good]);
    expect(await ids({ filter: { owner_id: o, 'custom_fields.when': { $exists: false } } })).toEqual([loose]);
    expect(await ids({ filter: { owner_id: o, 'custom_fields.day': { $gte: '2026-01-01' } } })).toEqual([good]);
    expect(await ids({ filter: { owner_id: o }, sort: [{ field: 'custom_fields.day', direction: 'asc' }] })).toEqual([good, loose]);
    const bad = await stack.api.post('/contacts/query', { filter: { 'custom_fields.day': { $lt: '2026-1-5' } } });
    expect({ status: bad.status, fields: bad.body.error?.details?.map((d: { field: string }) => d.field) }).toEqual({
      status: 400,
      fields: ['filter.custom_fields.day.$lt'],
    });
    const shown = await stack.api.post('/contacts/query', {
      filter: { owner_id: o },
      fields: ['custom_fields'],
      sort: [{ field: 'created_at', direction: 'asc' }],
    });
    expect(shown.body.data[1].custom_fields).toEqual({ when: '2026-05-01T10:00:00', day: '2026-02-30' });
  });
});
