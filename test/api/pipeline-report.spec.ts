import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DAY_MS, Deal, expectedReport, expectReport, HistoryRow, ms, Stage } from '../support/pipeline-report-expected';
import { startStack, TestStack } from '../support/stack';

/**
 * GET /pipelines/:pipeline_id/report (docs/pipeline-report.md). The test builds a pipeline with known moves,
 * then computes every figure itself from what the API answered (each deal's stage history and its times,
 * its final state, the stages' probabilities) and compares, over windows placed around the test's own
 * timestamps, so nothing depends on how fast the machine is.
 */

describe('Pipeline report', () => {
  let stack: TestStack;
  let pipelineId: string;
  let stages: Stage[];
  let deals: Deal[];
  const histories = new Map<string, HistoryRow[]>();

  const stageNamed = (name: string) => stages.find((s) => s.name === name)!.id;
  const report = (id: string, query: Record<string, string> = {}) => stack.api.get(`/pipelines/${id}/report?${new URLSearchParams(query).toString()}`);

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    const created = await stack.api.post('/pipelines', {
      name: 'Report',
      stages: [
        { name: 'Lead', type: 'open', probability: 0.1 },
        { name: 'Proposal', type: 'open', probability: 0.4 },
        // No stored probability: the report uses the inferred one the pipeline presents.
        { name: 'Negotiation', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    expect(created.status).toBe(201);
    pipelineId = created.body.data.id;
    stages = created.body.data.stages;

    const create = async (name: string, stage: string, value: number, expected_close?: string) => {
      const res = await stack.api.post('/deals', { name, pipeline_id: pipelineId, stage_id: stageNamed(stage), value, currency: 'USD', expected_close });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const move = async (id: string, stage: string) => expect((await stack.api.post(`/deals/${id}/stage`, { stage_id: stageNamed(stage) })).status).toBe(200);

    const a = await create('A', 'Lead', 100_001, '2026-12-31T23:30:00Z');
    const b = await create('B', 'Lead', 250_000);
    const c = await create('C', 'Proposal', 33_333);
    const d = await create('D', 'Lead', 50_000);
    const e = await create('E', 'Negotiation', 77_777, '2026-12-01T00:00:00Z');
    const f = await create('F', 'Proposal', 12_345, '2026-12-15T00:00:00Z');
    await move(a, 'Proposal');
    await move(b, 'Proposal');
    await move(a, 'Negotiation');
    // Back to an earlier stage: B entered Proposal but did not advance from it.
    await move(b, 'Lead');
    await move(c, 'Won');
    await move(d, 'Lost');
    // Won by status alone, without a stage move: the stage history does not see it, the report must.
    expect((await stack.api.patch(`/deals/${e}`, { status: 'won' })).status).toBe(200);
    expect((await stack.api.patch(`/deals/${f}`, { status: 'stalled' })).status).toBe(200);
    await move(b, 'Proposal');

    deals = [];
    for (const id of [a, b, c, d, e, f]) {
      deals.push((await stack.api.get(`/deals/${id}`)).body.data);
      histories.set(id, await stack.api.listAll(`/deals/${id}/history`));
    }
  });
  afterAll(() => stack?.stop());

  const allTimes = () =>
    [...histories.values()]
      .flat()
      .map((r) => ms(r.changed_at))
      .concat(deals.map((d) => ms(d.updated_at)));

  it('answers every figure over a window holding all the moves', async () => {
    const from = Math.min(...allTimes());
    const to = Math.max(...allTimes()) + 1;
    const res = await report(pipelineId, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      pipeline_id: pipelineId,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      time_zone: 'UTC',
      currency: 'USD',
    });
    const expected = expectedReport(stages, deals, histories, from, to, 'UTC');
    expectReport(res.body.data, expected);
    // The scenario holds what it means to: entries, an advance, a stay, wins by move and by status, a loss, a stalled deal.
    const proposal = expected.stages.find((s) => s.name === 'Proposal')!;
    expect(proposal).toMatchObject({ entered: 4, advanced: 2, open_count: 2, open_value: 262_345, weighted_value: 104_938 });
    expect(proposal.days_in_stage.p50).toBeGreaterThan(0);
    expect(expected).toMatchObject({ won_count: 2, won_value: 111_110, lost_count: 1 });
    expect(expected.forecast.map((m) => m.month)).toEqual(['2026-12']);
  });

  it('counts only what falls in [from, to): an entry at from counts, a move at to does not', async () => {
    const times = [...new Set(allTimes())].sort((x, y) => x - y);
    for (const [i, j] of [
      [2, 9],
      [5, 12],
      [7, times.length - 1],
    ]) {
      const from = times[i];
      const to = times[j];
      const res = await report(pipelineId, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
      expect(res.status).toBe(200);
      expectReport(res.body.data, expectedReport(stages, deals, histories, from, to, 'UTC'));
    }
  });

  it('reads forecast months in the time zone asked for', async () => {
    const res = await report(pipelineId, { time_zone: 'Europe/Berlin' });
    expect(res.status).toBe(200);
    expect(res.body.data.time_zone).toBe('Europe/Berlin');
    const expected = expectedReport(stages, deals, histories, 0, 1, 'Europe/Berlin').forecast;
    expect(res.body.data.forecast).toEqual(expected);
    // A's 23:30 UTC on New Year's Eve is already January in Berlin.
    expect(expected.map((m) => m.month)).toEqual(['2026-12', '2027-01']);
  });

  it('defaults to the last 90 days up to now', async () => {
    const before = Date.now();
    const res = await report(pipelineId);
    expect(res.status).toBe(200);
    const { from, to } = res.body.data;
    expect(ms(to) - ms(from)).toBe(90 * DAY_MS);
    expect(ms(to)).toBeGreaterThanOrEqual(before - 60_000);
    expect(res.body.data.stages.find((s: { name: string }) => s.name === 'Lead').entered).toBe(3);
  });

  it('asks for a currency only when the deals mix them, and reports that currency alone', async () => {
    const other = (await stack.api.post('/pipelines', { name: 'Mixed', stages: [{ name: 'Open', type: 'open', probability: 0.5 }] })).body.data;
    const empty = await report(other.id);
    expect(empty.status).toBe(200);
    expect(empty.body.data).toMatchObject({ currency: null, won_count: 0, win_rate: null, avg_cycle_days: null, forecast: [] });
    expect(empty.body.data.stages[0]).toMatchObject({ open_count: 0, entered: 0, conversion_rate: null, days_in_stage: { p50: null, p90: null } });
    for (const [value, currency] of [
      [1_000, 'USD'],
      [2_001, 'EUR'],
      [3_000, 'EUR'],
    ] as const) {
      expect((await stack.api.post('/deals', { name: 'M', pipeline_id: other.id, stage_id: other.stages[0].id, value, currency })).status).toBe(201);
    }
    const mixed = await report(other.id);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.code).toBe('validation_failed');
    expect(mixed.body.error.details).toEqual([expect.objectContaining({ field: 'currency', code: 'mixed_currencies' })]);
    expect(mixed.body.error.message).toContain('EUR, USD');
    const eur = await report(other.id, { currency: 'eur' });
    expect(eur.status).toBe(200);
    expect(eur.body.data.currency).toBe('EUR');
    expect(eur.body.data.stages[0]).toMatchObject({ open_count: 2, open_value: 5_001, weighted_value: 2_501, entered: 2 });
    // One currency needs none named, and naming it changes nothing.
    const single = await report(pipelineId, { currency: 'USD', time_zone: 'Europe/Berlin' });
    expect(single.body.data).toEqual(
      (await report(pipelineId, { time_zone: 'Europe/Berlin', from: single.body.data.from, to: single.body.data.to })).body.data,
    );
  });

  it('is the MCP tool pipeline_report, answering what the route answers', async () => {
    const client = new Client({ name: 'crm-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), { requestInit: { headers: { 'X-Api-Key': stack.apiKey } } }));
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'pipeline_report')!;
      expect(Object.keys(tool.inputSchema.properties!).sort()).toEqual(['currency', 'from', 'pipeline_id', 'time_zone', 'to']);
      expect(tool.inputSchema.required).toEqual(['pipeline_id']);
      expect(JSON.stringify(tool).length).toBeLessThan(1_500);
      const query = {
        from: new Date(Math.min(...allTimes())).toISOString(),
        to: new Date(Math.max(...allTimes()) + 1).toISOString(),
        time_zone: 'Europe/Berlin',
      };
      const result = (await client.callTool({ name: 'pipeline_report', arguments: { pipeline_id: pipelineId, ...query } })) as {
        isError?: boolean;
        structuredContent: unknown;
      };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual((await report(pipelineId, query)).body);
      const bad = (await client.callTool({ name: 'pipeline_report', arguments: { pipeline_id: pipelineId, time_zone: 'Nowhere' } })) as { isError?: boolean };
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('answers bad input with a 4xx in the error shape', async () => {
    const missing = await report('pipe_00000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expect((await report('not-an-id')).status).toBe(404);
    const cases: Array<[Record<string, string>, string]> = [
      [{ from: 'yesterday' }, 'from'],
      [{ to: '2026-13-01T00:00:00Z' }, 'to'],
      [{ from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'from'],
      [{ from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'from'],
      [{ from: '2000-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'to'],
      [{ time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ time_zone: '+01:00' }, 'time_zone'],
      [{ currency: 'XYZW' }, 'currency'],
    ];
    for (const [query, field] of cases) {
      const res = await report(pipelineId, query);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'validation_failed' });
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
  });
});
