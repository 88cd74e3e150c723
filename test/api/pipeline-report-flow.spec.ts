import { Client } from 'pg';
import { Deal, expectedReport, expectReport, HistoryRow, ms, Stage } from '../support/pipeline-report-expected';
import { startStack, TestStack } from '../support/stack';

/**
 * The stage-history columns behind the report's `entered` and `advanced` (`later_stage_ids`,
 * `previous_entry_at`, kept by a trigger): deals moved back and forth, re-entering stages, closed and
 * reopened, moved off a deleted stage all at once, deleted; then the stages reordered. After each step the
 * report must answer, over every window between the moves' instants, what the test computes from the
 * history the API lists, and each stored row must hold what its deal's rows say.
 */
describe('Pipeline report: the history columns kept for entries and advances', () => {
  let stack: TestStack;
  let db: Client;
  let pipelineId: string;
  let stages: Stage[];
  const ids: string[] = [];

  const stageNamed = (name: string) => stages.find((s) => s.name === name)!.id;
  const move = async (id: string, stage: string) => expect((await stack.api.post(`/deals/${id}/stage`, { stage_id: stageNamed(stage) })).status).toBe(200);
  const create = async (name: string, stage: string) => {
    const res = await stack.api.post('/deals', { name, pipeline_id: pipelineId, stage_id: stageNamed(stage), value: 1_000, currency: 'USD' });
    expect(res.status).toBe(201);
    ids.push(res.body.data.id);
    return res.body.data.id as string;
  };
  const reloadStages = async () => {
    stages = (await stack.api.get(`/pipelines/${pipelineId}`)).body.data.stages;
  };

  /** The report over windows bounded by every pair of instants the history holds, against the records. */
  async function expectReportsMatch(): Promise<void> {
    const deals: Deal[] = [];
    const histories = new Map<string, HistoryRow[]>();
    for (const id of ids) {
      deals.push((await stack.api.get(`/deals/${id}`)).body.data);
      histories.set(id, await stack.api.listAll(`/deals/${id}/history`));
    }
    const times = [...new Set([...histories.values()].flat().map((r) => ms(r.changed_at)))].sort((x, y) => x - y);
    const bounds = [times[0], ...times.slice(1).filter((_, i) => i % 2 === 0), times[times.length - 1] + 1];
    for (let i = 0; i < bounds.length; i++) {
      for (let j = i + 1; j < bounds.length; j++) {
        const [from, to] = [bounds[i], bounds[j]];
        const res = await stack.api.get(`/pipelines/${pipelineId}/report?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`);
        expect(res.status).toBe(200);
        expectReport(res.body.data, expectedReport(stages, deals, histories, from, to, 'UTC'));
      }
    }
  }

  /** Each stored row against its deal's rows in (changed_at, id) order: the stages entered after it, the last entry into its stage before it. */
  async function expectStoredColumnsMatch(): Promise<void> {
    const { rows } = await db.query<{
      id: string;
      deal_id: string;
      to_stage_id: string;
      changed_at: string;
      later_stage_ids: string[];
      previous_entry_at: string | null;
    }>(`SELECT id, deal_id, to_stage_id, changed_at::text, later_stage_ids, previous_entry_at::text FROM deals.stage_history ORDER BY deal_id, changed_at, id`);
    expect(rows.length).toBeGreaterThan(0);
    const actual = rows.map((r) => ({ id: r.id, later: r.later_stage_ids, previous: r.previous_entry_at }));
    const expected = rows.map((r) => {
      const same = rows.filter((o) => o.deal_id === r.deal_id);
      const k = same.indexOf(r);
      const earlier = same.slice(0, k).filter((o) => o.to_stage_id === r.to_stage_id);
      return {
        id: r.id,
        later: [...new Set(same.slice(k + 1).map((o) => o.to_stage_id))].sort(),
        previous: earlier.length ? earlier[earlier.length - 1].changed_at : null,
      };
    });
    expect(actual).toEqual(expected);
    // The scenario holds what it means to: re-entries, and rows that saw later stages.
    expect(expected.some((r) => r.previous !== null)).toBe(true);
    expect(expected.some((r) => r.later.length > 1)).toBe(true);
  }

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals'] });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    const created = await stack.api.post('/pipelines', {
      name: 'Flow',
      stages: [
        { name: 'Lead', type: 'open' },
        { name: 'Proposal', type: 'open' },
        { name: 'Negotiation', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    expect(created.status).toBe(201);
    pipelineId = created.body.data.id;
    stages = created.body.data.stages;
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('follows deals moved back and forth, closed and reopened', async () => {
    const p = await create('Back and forth', 'Lead');
    const r = await create('Reopened', 'Lead');
    const l = await create('Lost', 'Proposal');
    for (const stage of ['Proposal', 'Lead', 'Proposal', 'Negotiation', 'Lead']) await move(p, stage);
    // Won, then reopened by a move back to an open stage, then on again.
    for (const stage of ['Won', 'Lead', 'Proposal']) await move(r, stage);
    await move(l, 'Lost');
    await move(l, 'Proposal');
    await expectStoredColumnsMatch();
    await expectReportsMatch();
  });

  it('follows deals moved off a deleted stage, and deleted deals', async () => {
    const added = await stack.api.post(`/pipelines/${pipelineId}/stages`, { name: 'Extra', type: 'open', position: 1 });
    expect(added.status).toBe(201);
    await reloadStages();
    const s = await create('Moved off', 'Extra');
    const t = await create('Moved off too', 'Lead');
    await move(t, 'Extra');
    const gone = await create('Deleted', 'Lead');
    await move(gone, 'Proposal');
    // Both deals leave Extra in one statement, their history written as one insert.
    expect((await stack.api.delete(`/pipelines/${pipelineId}/stages/${stageNamed('Extra')}?move_to_stage_id=${stageNamed('Negotiation')}`)).status).toBe(204);
    await reloadStages();
    await move(s, 'Proposal');
    expect((await stack.api.delete(`/deals/${gone}`)).status).toBe(204);
    ids.splice(ids.indexOf(gone), 1);
    await expectStoredColumnsMatch();
    await expectReportsMatch();
  });

  it('keeps the columns through long histories, rows dated before others and several rows of a deal in one insert', async () => {
    // Rows written straight to the table, as a migration or a repair script would; a deal outside the reports' set.
    const res = await stack.api.post('/deals', { name: 'Long history', pipeline_id: pipelineId, stage_id: stageNamed('Lead'), value: 1, currency: 'USD' });
    expect(res.status).toBe(201);
    const deal: string = res.body.data.id;
    const open = ['Lead', 'Proposal', 'Negotiation'].map(stageNamed);
    let row = 0;
    const insert = (rows: Array<{ stage: string; at: string }>) =>
      db.query(
        `INSERT INTO deals.stage_history (id, deal_id, from_stage_id, to_stage_id, changed_at, changed_by)
         SELECT 'sh_flow_' || r.n, $1, NULL, r.stage, r.at::timestamptz, 'user_flow' FROM unnest($2::text[], $3::text[], $4::text[]) AS r(n, stage, at)`,
        [deal, rows.map(() => `${++row}`.padStart(5, '0')), rows.map((r) => r.stage), rows.map((r) => r.at)],
      );
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString();
    // One row a statement, each after the last: re-entering stages over and over, and now and then a stage for the first time.
    for (let i = 0; i < 150; i++) await insert([{ stage: open[next() % 3], at: at(10 + i) }]);
    await expectStoredColumnsMatch();
    // A row dated before others of its deal; two rows of the deal in one statement; a row at the same instant as the last.
    await insert([{ stage: stageNamed('Won'), at: at(50) }]);
    await insert([
      { stage: open[0], at: at(400) },
      { stage: open[1], at: at(300) },
    ]);
    await insert([{ stage: open[2], at: at(400) }]);
    await expectStoredColumnsMatch();
    for (let i = 0; i < 20; i++) await insert([{ stage: open[next() % 3], at: at(500 + i) }]);
    await expectStoredColumnsMatch();
    expect((await stack.api.delete(`/deals/${deal}`)).status).toBe(204);
  });

  it('judges advances by the stages as they are ordered now', async () => {
    const order = ['Negotiation', 'Lead', 'Proposal', 'Won', 'Lost'].map(stageNamed);
    expect((await stack.api.put(`/pipelines/${pipelineId}/stages`, { stage_ids: order })).status).toBe(200);
    await reloadStages();
    expect(stages.map((s) => s.name)).toEqual(['Negotiation', 'Lead', 'Proposal', 'Won', 'Lost']);
    await expectReportsMatch();
  });
});
