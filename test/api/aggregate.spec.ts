import { startStack, TestStack } from '../support/stack';

/**
 * POST /<object>/aggregate (docs/aggregate.md): every metric, dimension, interval and time zone checked
 * against values computed here from the records themselves, read back with POST /<object>/query.
 */

type Deal = { id: string; value: number; currency: string; expected_close: string | null; stage: { name: string }; custom_fields: { tier?: string } };

/** PostgreSQL's percentile_cont: linear interpolation between the two nearest ranks. */
function percentileCont(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** The local wall-clock parts of an instant in a zone. */
function localParts(instant: number, zone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return { y: get('year'), m: get('month'), d: get('day'), h: get('hour'), mi: get('minute'), s: get('second') };
}

/** The zone's offset from UTC at an instant, in minutes. */
function offsetAt(instant: number, zone: string): number {
  const p = localParts(instant, zone);
  return Math.round((Date.UTC(p.y, p.m - 1, p.d, p.h, p.mi, p.s) - Math.floor(instant / 1000) * 1000) / 60000);
}

/** The first instant of the interval holding `iso` in `zone`, named as ISO 8601 with the zone's offset then. */
function bucketOf(iso: string, interval: string, zone: string): string {
  const p = localParts(Date.parse(iso), zone);
  // An hour keeps the offset of the instant in it, so a repeated hour (the end of DST) is two buckets.
  if (interval === 'hour') return named(Math.floor(Date.parse(iso) / 1000) * 1000 - (p.mi * 60 + p.s) * 1000, zone);
  let { y, m, d, h } = p;
  if (interval !== 'hour') h = 0;
  if (interval === 'week') {
    const weekday = (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7;
    const monday = new Date(Date.UTC(y, m - 1, d - weekday));
    [y, m, d] = [monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate()];
  }
  if (interval === 'month' || interval === 'quarter' || interval === 'year') d = 1;
  if (interval === 'quarter') m = Math.floor((m - 1) / 3) * 3 + 1;
  if (interval === 'year') m = 1;
  const wall = Date.UTC(y, m - 1, d, h);
  let instant = wall - offsetAt(wall, zone) * 60000;
  instant = wall - offsetAt(instant, zone) * 60000;
  return named(instant, zone);
}

function named(instant: number, zone: string): string {
  const offset = offsetAt(instant, zone);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const local = new Date(instant + offset * 60000).toISOString().slice(0, -1);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const byKey = (rows: Array<{ group: Record<string, unknown>; metrics: Record<string, unknown> }>) =>
  Object.fromEntries(rows.map((r) => [JSON.stringify(r.group), r.metrics]));

describe('POST /<object>/aggregate', () => {
  let stack: TestStack;
  let pipeline: { id: string; stages: Array<{ id: string; name: string }> };
  let deals: Deal[] = [];
  const companies: Array<{ id: string; name: string }> = [];

  // Instants chosen around month ends, week starts and the European and American DST changes.
  const CLOSES = [
    '2026-03-29T00:30:00Z',
    '2026-03-29T01:30:00Z',
    '2026-03-31T22:30:00Z',
    '2026-03-31T23:30:00Z',
    '2026-06-30T21:59:59Z',
    '2026-06-30T22:00:00Z',
    '2026-11-01T05:30:00Z',
    '2026-11-01T06:30:00Z',
    '2026-11-01T06:10:00Z',
    '2026-12-31T23:00:00Z',
    '2027-01-04T00:00:00Z',
    null,
  ];

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
    pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Sales',
        stages: [
          { name: 'Lead', type: 'open' },
          { name: 'Proposal', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    expect((await stack.api.post('/objects/deals/fields', { name: 'tier', type: 'enum', enum_values: ['gold', 'silver'] })).status).toBe(201);
    for (const name of ['Acme', 'Globex']) companies.push((await stack.api.post('/companies', { name })).body.data);
    for (let i = 0; i < 22; i++) {
      const res = await stack.api.post('/deals', {
        name: `Deal ${i}`,
        pipeline_id: pipeline.id,
        stage_id: pipeline.stages[i % 3].id,
        value: ((i * 7919) % 50) * 1000 + (i % 4) * 10,
        currency: i === 21 ? 'EUR' : 'USD',
        ...(CLOSES[i % CLOSES.length] ? { expected_close: CLOSES[i % CLOSES.length] } : {}),
        ...(i % 4 === 0 ? {} : { custom_fields: { tier: i % 4 === 1 ? 'gold' : 'silver' } }),
        ...(i % 5 === 0 ? {} : { company_id: companies[i % 2].id }),
      });
      expect(res.status).toBe(201);
    }
    deals = (await stack.api.post('/deals/query', { fields: ['value', 'currency', 'expected_close', 'stage.name', 'custom_fields', 'company_id'], limit: 200 }))
      .body.data;
    expect(deals).toHaveLength(22);
  });
  afterAll(() => stack?.stop());

  const usd = () => deals.filter((d) => d.currency === 'USD');

  it('answers every metric over the records the filter matches, as one group with group {}', async () => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      metrics: {
        n: { op: 'count' },
        closing: { op: 'count', field: 'expected_close' },
        tiers: { op: 'count_distinct', field: 'custom_fields.tier' },
        total: { op: 'sum', field: 'value' },
        mean: { op: 'avg', field: 'value' },
        low: { op: 'min', field: 'value' },
        high: { op: 'max', field: 'value' },
        first_close: { op: 'min', field: 'expected_close' },
        p90: { op: 'percentile', field: 'value', percentile: 90 },
        p0: { op: 'percentile', field: 'value', percentile: 0 },
      },
    });
    expect(res.status).toBe(200);
    const values = usd().map((d) => d.value);
    const closes = usd().flatMap((d) => (d.expected_close ? [Date.parse(d.expected_close)] : []));
    const expected = {
      n: values.length,
      closing: closes.length,
      tiers: new Set(usd().flatMap((d) => (d.custom_fields.tier ? [d.custom_fields.tier] : []))).size,
      total: values.reduce((a, b) => a + b, 0),
      mean: values.reduce((a, b) => a + b, 0) / values.length,
      low: Math.min(...values),
      high: Math.max(...values),
      first_close: new Date(Math.min(...closes)).toISOString(),
      p90: percentileCont(values, 90),
      p0: Math.min(...values),
    };
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].group).toEqual({});
    const { mean, p90, ...exact } = res.body.data[0].metrics;
    const { mean: _mean, p90: _p90, ...exactExpected } = expected;
    expect(exact).toEqual(exactExpected);
    expect(mean).toBeCloseTo(expected.mean, 6);
    expect(p90).toBeCloseTo(expected.p90!, 6);
    expect(res.body.totals).toEqual(res.body.data[0].metrics);
    expect(res.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('answers one group of zeros and nulls when nothing matches', async () => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { value: { $lt: -1 } },
      metrics: { n: { op: 'count' }, d: { op: 'count_distinct', field: 'value' }, s: { op: 'sum', field: 'value' }, a: { op: 'avg', field: 'value' } },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ group: {}, metrics: { n: 0, d: 0, s: null, a: null } }]);
    const grouped = await stack.api.post('/deals/aggregate', { filter: { value: { $lt: -1 } }, group_by: ['stage.name'], metrics: { n: { op: 'count' } } });
    expect(grouped.body).toEqual({ data: [], totals: { n: 0 }, has_more: false, next_cursor: null });
  });

  it('groups by a relation path and a custom field, nulls as their own group, sorted by the dimensions with nulls last', async () => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      group_by: ['stage.name', 'custom_fields.tier'],
      metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'value' } },
    });
    expect(res.status).toBe(200);
    const expected = new Map<string, { n: number; total: number }>();
    for (const d of usd()) {
      const key = JSON.stringify({ 'stage.name': d.stage.name, 'custom_fields.tier': d.custom_fields.tier ?? null });
      const m = expected.get(key) ?? { n: 0, total: 0 };
      expected.set(key, { n: m.n + 1, total: m.total + d.value });
    }
    expect(byKey(res.body.data)).toEqual(Object.fromEntries(expected));
    const values = usd().map((d) => d.value);
    expect(res.body.totals).toEqual({ n: values.length, total: values.reduce((a, b) => a + b, 0) });
    // Totals combined from the groups: averages from their sums and counts, extremes from theirs.
    const combined = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      group_by: ['stage.name', 'custom_fields.tier'],
      metrics: {
        mean: { op: 'avg', field: 'value' },
        low: { op: 'min', field: 'value' },
        last: { op: 'max', field: 'expected_close' },
        c: { op: 'count', field: 'expected_close' },
      },
    });
    const closes = usd().flatMap((d) => (d.expected_close ? [Date.parse(d.expected_close)] : []));
    expect(combined.body.totals).toEqual({
      mean: expect.closeTo(values.reduce((a, b) => a + b, 0) / values.length, 6),
      low: Math.min(...values),
      last: new Date(Math.max(...closes)).toISOString(),
      c: closes.length,
    });
    const order = res.body.data.map((r: any) => [r.group['stage.name'], r.group['custom_fields.tier']]);
    const sorted = [...order].sort((a, b) =>
      a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] === b[1] ? 0 : a[1] === null ? 1 : b[1] === null ? -1 : a[1] < b[1] ? -1 : 1,
    );
    expect(order).toEqual(sorted);
  });

  it.each([
    ['hour', 'UTC'],
    ['hour', 'America/New_York'],
    ['hour', 'Asia/Kolkata'],
    ['day', 'America/New_York'],
    ['week', 'UTC'],
    ['week', 'Asia/Kolkata'],
    ['month', 'Europe/Berlin'],
    ['quarter', 'Australia/Sydney'],
    ['year', 'Pacific/Kiritimati'],
  ])('buckets date-times by %s in %s, named by the first instant with its offset', async (interval, zone) => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      group_by: [{ field: 'expected_close', interval, time_zone: zone }],
      metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'value' } },
    });
    expect(res.status).toBe(200);
    const expected: Record<string, { n: number; total: number }> = {};
    for (const d of usd()) {
      const key = JSON.stringify({ expected_close: d.expected_close ? bucketOf(d.expected_close, interval, zone) : null });
      expected[key] = { n: (expected[key]?.n ?? 0) + 1, total: (expected[key]?.total ?? 0) + d.value };
    }
    expect(byKey(res.body.data)).toEqual(expected);
  });

  it('defaults the time zone to UTC', async () => {
    const res = await stack.api.post('/deals/aggregate', { group_by: [{ field: 'created_at', interval: 'year' }], metrics: { n: { op: 'count' } } });
    expect(res.status).toBe(200);
    expect(res.body.data[0].group.created_at).toMatch(/^\d{4}-01-01T00:00:00\.000\+00:00$/);
  });

  it('buckets numbers into half-open ranges, one below the first bound and one from the last', async () => {
    const bounds = [5000, 20000, 40000];
    const res = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      group_by: [{ field: 'value', ranges: bounds }],
      metrics: { n: { op: 'count' } },
    });
    expect(res.status).toBe(200);
    const expected: Record<string, { n: number }> = {};
    for (const d of usd()) {
      const k = bounds.filter((b) => d.value >= b).length;
      const key = JSON.stringify({ value: { from: k === 0 ? null : bounds[k - 1], to: k === bounds.length ? null : bounds[k] } });
      expected[key] = { n: (expected[key]?.n ?? 0) + 1 };
    }
    expect(byKey(res.body.data)).toEqual(expected);
  });

  it('refuses to add money across currencies, naming the group; grouping by currency answers', async () => {
    const mixed = await stack.api.post('/deals/aggregate', { group_by: ['stage.name'], metrics: { total: { op: 'sum', field: 'value' } } });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.code).toBe('validation_failed');
    expect(mixed.body.error.details).toEqual([expect.objectContaining({ field: 'metrics.total.field', code: 'mixed_currencies' })]);
    expect(mixed.body.error.details[0].message).toContain(`"stage.name":"${deals.find((d) => d.currency === 'EUR')!.stage.name}"`);
    expect(mixed.body.error.details[0].message).toContain('currency');
    const none = await stack.api.post('/deals/aggregate', { metrics: { top: { op: 'max', field: 'value' } } });
    expect(none.status).toBe(400);
    expect(none.body.error.details[0].code).toBe('mixed_currencies');
    // Counting is not adding money.
    expect((await stack.api.post('/deals/aggregate', { group_by: ['stage.name'], metrics: { n: { op: 'count', field: 'value' } } })).status).toBe(200);

    const split = await stack.api.post('/deals/aggregate', { group_by: ['currency'], metrics: { total: { op: 'sum', field: 'value' }, n: { op: 'count' } } });
    expect(split.status).toBe(200);
    const sum = (c: string) => deals.filter((d) => d.currency === c).reduce((a, d) => a + d.value, 0);
    expect(split.body.data).toEqual([
      { group: { currency: 'EUR' }, metrics: { total: sum('EUR'), n: 1 } },
      { group: { currency: 'USD' }, metrics: { total: sum('USD'), n: 21 } },
    ]);
    // The totals would add both: left null, the count kept.
    expect(split.body.totals).toEqual({ total: null, n: 22 });
  });

  it('pages groups with a signed cursor, sorted by a metric, until has_more is false', async () => {
    const body = {
      filter: { currency: 'USD' },
      group_by: ['value'],
      metrics: { n: { op: 'count' } },
      sort: [{ metric: 'n', direction: 'desc' }],
      limit: 3,
    };
    const whole = await stack.api.post('/deals/aggregate', { ...body, limit: 1000 });
    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await stack.api.post('/deals/aggregate', { ...body, cursor });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(3);
      expect(res.body.totals).toEqual({ n: usd().length });
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
      expect(cursor === null).toBe(!res.body.has_more);
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(2);
    expect(seen).toEqual(whole.body.data);
    expect(new Set(seen.map((g) => g.group.value)).size).toBe(new Set(usd().map((d) => d.value)).size);
    const counts = seen.map((g) => g.metrics.n);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));

    const first = await stack.api.post('/deals/aggregate', body);
    const other = await stack.api.post('/deals/aggregate', { ...body, sort: [], cursor: first.body.next_cursor });
    expect(other.status).toBe(400);
    expect(other.body.error.details[0].code).toBe('invalid_cursor');
    const forged = await stack.api.post('/deals/aggregate', { ...body, cursor: `${first.body.next_cursor.slice(0, -2)}AA` });
    expect(forged.status).toBe(400);
    expect(forged.body.error.details.map((d: { field: string; code: string }) => [d.field, d.code])).toEqual([['cursor', 'invalid_cursor']]);
  });

  it('names every problem in one validation_failed', async () => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { nope: 1 },
      group_by: ['stage.name', 'stage.name', { field: 'name', interval: 'month' }],
      metrics: {
        Bad: { op: 'count' },
        a: { op: 'sum', field: 'name' },
        b: { op: 'median', field: 'value' },
        c: { op: 'percentile', field: 'value', percentile: 101 },
        d: { op: 'avg' },
        e: { op: 'max', field: 'missing' },
      },
      sort: [{ metric: 'zzz' }, { group: 'owner_id' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: any) => d.field)).toEqual([
      'filter.nope',
      'group_by.1',
      'group_by.2.interval',
      'metrics.Bad',
      'metrics.a.op',
      'metrics.b.op',
      'metrics.c.percentile',
      'metrics.d.field',
      'metrics.e.field',
      'sort.0.metric',
      'sort.1.group',
    ]);

    const more = await stack.api.post('/deals/aggregate', {
      group_by: [
        { field: 'name', ranges: [1, 2] },
        { field: 'created_at', interval: 'month', time_zone: 'Mars/Olympus' },
        { field: 'value', ranges: [3, 2] },
      ],
      metrics: { n: { op: 'count' } },
    });
    expect(more.body.error.details.map((d: any) => [d.field, d.code])).toEqual([
      ['group_by.0.ranges', 'invalid_ranges'],
      ['group_by.1.time_zone', 'invalid_value'],
      ['group_by.2.ranges', 'invalid_value'],
    ]);
  });

  it.each([
    [{ metrics: {} }, 'metrics'],
    [{ metrics: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`m${i}`, { op: 'count' }])) }, 'metrics'],
    [{ metrics: { n: { op: 'count' } }, limit: 1001 }, 'limit'],
    [{ metrics: { n: { op: 'count' } }, limit: 0 }, 'limit'],
    [{ metrics: { n: { op: 'count' } }, group_by: ['name', 'currency', 'status', 'source'] }, 'group_by'],
    [{ group_by: ['name'] }, 'metrics'],
    [{ metrics: { n: { op: 'count' } }, group_by: [{ field: 'value', ranges: Array.from({ length: 101 }, (_, i) => i) }] }, 'group_by.0.ranges'],
  ])('refuses out-of-bounds requests, naming the field: %j', async (body, field) => {
    const res = await stack.api.post('/deals/aggregate', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  it('answers count, sum, avg, min and max over paths another service keeps, and says why not count_distinct or percentile', async () => {
    const res = await stack.api.post('/deals/aggregate', {
      filter: { currency: 'USD' },
      group_by: ['company.name'],
      metrics: { n: { op: 'count' }, total: { op: 'sum', field: 'value' } },
    });
    expect(res.status).toBe(200);
    const nameOf = new Map(companies.map((c) => [c.id, c.name]));
    const expected: Record<string, { n: number; total: number }> = {};
    for (const d of usd() as Array<Deal & { company_id?: string | null }>) {
      const key = JSON.stringify({ 'company.name': d.company_id ? nameOf.get(d.company_id) : null });
      expected[key] = { n: (expected[key]?.n ?? 0) + 1, total: (expected[key]?.total ?? 0) + d.value };
    }
    expect(byKey(res.body.data)).toEqual(expected);
    expect(res.body.data[res.body.data.length - 1].group).toEqual({ 'company.name': null });

    const filtered = await stack.api.post('/deals/aggregate', { filter: { currency: 'USD', 'company.name': 'Acme' }, metrics: { n: { op: 'count' } } });
    expect(filtered.body.data[0].metrics.n).toBe(expected[JSON.stringify({ 'company.name': 'Acme' })].n);

    const refused = await stack.api.post('/deals/aggregate', {
      metrics: { names: { op: 'count_distinct', field: 'company.name' }, p: { op: 'percentile', field: 'company.created_at', percentile: 50 } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((d: any) => [d.field, d.code])).toEqual([
      ['metrics.names.op', 'not_across_services'],
      ['metrics.p.op', 'invalid_op'],
    ]);
    expect(refused.body.error.details[0].message).toContain('another service');
  });

  it('aggregates tasks by their deal, read from the deals service', async () => {
    const byDeal = deals.slice(0, 6);
    for (const [i, d] of byDeal.entries()) {
      for (let k = 0; k <= i % 2; k++) expect((await stack.api.post('/tasks', { title: `T${i}.${k}`, deal_id: d.id })).status).toBe(201);
    }
    const tasks = (await stack.api.post('/tasks/query', { fields: ['deal_id'], limit: 200 })).body.data as Array<{ deal_id: string }>;
    const dealOf = new Map(deals.map((d) => [d.id, d]));
    const res = await stack.api.post('/tasks/aggregate', {
      group_by: ['deal.stage_id'],
      metrics: {
        n: { op: 'count' },
        total: { op: 'sum', field: 'deal.value' },
        high: { op: 'max', field: 'deal.value' },
        mean: { op: 'avg', field: 'deal.value' },
      },
    });
    expect(res.status).toBe(200);
    const stageOf = new Map(pipeline.stages.map((s) => [s.name, s.id]));
    const expected: Record<string, { n: number; total: number; high: number; mean: number }> = {};
    for (const t of tasks) {
      const d = dealOf.get(t.deal_id)!;
      const key = JSON.stringify({ 'deal.stage_id': stageOf.get(d.stage.name) });
      const e = expected[key] ?? { n: 0, total: 0, high: -Infinity, mean: 0 };
      expected[key] = { n: e.n + 1, total: e.total + d.value, high: Math.max(e.high, d.value), mean: 0 };
    }
    for (const e of Object.values(expected)) e.mean = e.total / e.n;
    const got = byKey(res.body.data) as Record<string, { mean: number }>;
    for (const [key, e] of Object.entries(expected)) {
      expect(got[key]).toMatchObject({ n: e.n, total: e.total, high: e.high });
      expect(got[key].mean).toBeCloseTo(e.mean, 6);
    }
    const refused = await stack.api.post('/tasks/aggregate', { metrics: { p: { op: 'percentile', field: 'deal.value', percentile: 50 } } });
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'metrics.p.op', code: 'not_across_services' })]);
  });

  it('serves contacts, companies and users, and is a read for scopes', async () => {
    for (const stage of ['lead', 'lead', 'customer'])
      expect((await stack.api.post('/contacts', { email: `${Math.random()}@example.com`, stage })).status).toBe(201);
    const res = await stack.api.post('/contacts/aggregate', { group_by: ['stage'], metrics: { n: { op: 'count' } } });
    expect(res.status).toBe(200);
    expect(byKey(res.body.data)).toEqual({ '{"stage":"customer"}': { n: 1 }, '{"stage":"lead"}': { n: 2 } });
    expect((await stack.api.post('/companies/aggregate', { metrics: { n: { op: 'count' } } })).body.data[0].metrics.n).toBe(2);
    expect((await stack.api.post('/users/aggregate', { metrics: { n: { op: 'count' } } })).status).toBe(200);
  });
});
