import { eventSubjectWildcard, DomainEvent } from '@crm/contracts';
import { connect, JSONCodec, NatsConnection } from 'nats';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const STAGES = [
  { name: 'Qualify', type: 'open', color: '#112233' },
  { name: 'Propose', type: 'open' },
  { name: 'Negotiate', type: 'open', probability: 0.8 },
  { name: 'Won', type: 'won' },
  { name: 'Lost', type: 'lost' },
];

describe('Pipelines', () => {
  let stack: TestStack;
  let nc: NatsConnection;
  const events: DomainEvent[] = [];

  beforeAll(async () => {
    stack = await startStack();
    nc = await connect({ servers: stack.env.NATS_URL });
    const codec = JSONCodec<DomainEvent>();
    nc.subscribe(eventSubjectWildcard(stack.namespace), { callback: (_err, msg) => events.push(codec.decode(msg.data)) });
    await nc.flush();
  });
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  async function createPipeline(body: Record<string, unknown> = {}) {
    const res = await stack.api.post('/pipelines', { name: 'Sales', stages: STAGES, ...body });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  it('creates a pipeline with ids, zero-based positions in the order sent and inferred probabilities', async () => {
    const res = await stack.api.post('/pipelines', { name: 'New business', stages: STAGES, metadata: { team: 'emea' } });
    expect(res.status).toBe(201);
    const pipeline = res.body.data;
    expect(pipeline.id).toMatch(/^pipe_[0-9a-z]{26}$/);
    expect(pipeline).toMatchObject({ name: 'New business', metadata: { team: 'emea' } });
    expect(pipeline.stages.map((s: { name: string }) => s.name)).toEqual(STAGES.map((s) => s.name));
    expect(pipeline.stages.map((s: { position: number }) => s.position)).toEqual([0, 1, 2, 3, 4]);
    for (const stage of pipeline.stages) expect(stage.id).toMatch(/^stg_[0-9a-z]{26}$/);
    // Open stages without a probability are spread over the open stages (k / (n + 1)); won 1, lost 0.
    expect(pipeline.stages.map((s: { probability: number }) => s.probability)).toEqual([0.25, 0.5, 0.8, 1, 0]);
    expect(pipeline.stages[0].color).toBe('#112233');
    expect(pipeline.stages[1].color).toBeNull();
    expect(Object.keys(pipeline).sort()).toEqual(['created_at', 'custom_fields', 'id', 'is_default', 'metadata', 'name', 'stages', 'updated_at']);

    const got = await stack.api.get(`/pipelines/${pipeline.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(pipeline);
    await eventually(async () => (events.some((e) => e.type === 'pipeline.created' && e.data.pipeline_id === pipeline.id) ? true : undefined));
  });

  it('places stages with an explicit position first and appends the rest in the order sent', async () => {
    const pipeline = await createPipeline({
      stages: [
        { name: 'B', type: 'open', position: 1 },
        { name: 'C', type: 'open' },
        { name: 'A', type: 'open', position: 0 },
      ],
    });
    expect(pipeline.stages.map((s: { name: string; position: number }) => [s.name, s.position])).toEqual([
      ['A', 0],
      ['B', 1],
      ['C', 2],
    ]);
  });

  it('validates stage bodies: probability in 0..1, #rrggbb colors, known types', async () => {
    const res = await stack.api.post('/pipelines', {
      name: 'Bad',
      stages: [
        { name: 'x', type: 'open', probability: 1.5 },
        { name: 'y', type: 'maybe', color: 'red' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['stages.0.probability', 'stages.1.color', 'stages.1.type']);

    const negative = await stack.api.post('/pipelines', { name: 'Bad', stages: [{ name: 'x', type: 'open', probability: -0.1 }] });
    expect(negative.status).toBe(400);
    const missing = await stack.api.post('/pipelines', { stages: [] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ field: 'name', code: 'required', message: 'name is required' }]);
    const duplicate = await stack.api.post('/pipelines', {
      name: 'Dup',
      stages: [
        { name: 'Same', type: 'open' },
        { name: 'same', type: 'won' },
      ],
    });
    expect(duplicate.status).toBe(400);
    const unknown = await stack.api.post('/pipelines', { name: 'X', colour: '#ffffff' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0]).toMatchObject({ field: 'colour', code: 'unknown_field' });
    const tooMuchMetadata = await stack.api.post('/pipelines', { name: 'X', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) });
    expect(tooMuchMetadata.status).toBe(400);
    expect(tooMuchMetadata.body.error.details[0].field).toBe('metadata');
  });

  it('keeps exactly one default pipeline: setting it moves it, and it cannot simply be unset', async () => {
    const all = await stack.api.listAll('/pipelines');
    const defaults = all.filter((p) => p.is_default);
    expect(defaults).toHaveLength(1);
    // The first pipeline this suite created became the default without asking.
    expect(defaults[0].id).toBe(all[0].id);

    const second = await createPipeline({ name: 'Renewals', is_default: true });
    expect(second.is_default).toBe(true);
    const after = await stack.api.listAll('/pipelines');
    expect(after.filter((p) => p.is_default).map((p) => p.id)).toEqual([second.id]);

    const unset = await stack.api.patch(`/pipelines/${second.id}`, { is_default: false });
    expect(unset.status).toBe(400);
    expect(unset.body.error.details[0].field).toBe('is_default');

    const third = await createPipeline({ name: 'Partners' });
    expect(third.is_default).toBe(false);
    const patched = await stack.api.patch(`/pipelines/${third.id}`, { is_default: true, name: 'Partner deals' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: third.id, is_default: true, name: 'Partner deals' });
    expect(patched.body.data.stages).toHaveLength(STAGES.length);
    expect((await stack.api.get(`/pipelines/${second.id}`)).body.data.is_default).toBe(false);
  });

  it('keeps one default under concurrent requests', async () => {
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => stack.api.post('/pipelines', { name: `Race ${i}`, is_default: true })));
    expect(created.map((r) => r.status)).toEqual(Array(6).fill(201));
    const all = await stack.api.listAll('/pipelines');
    expect(all.filter((p) => p.is_default)).toHaveLength(1);
  });

  it('adds a stage at the end or at a position, and rejects bad input', async () => {
    const pipeline = await createPipeline({
      stages: [
        { name: 'One', type: 'open' },
        { name: 'Two', type: 'open' },
      ],
    });
    const appended = await stack.api.post(`/pipelines/${pipeline.id}/stages`, { name: 'Closed won', type: 'won', color: '#00FF00' });
    expect(appended.status).toBe(201);
    expect(appended.body.data.stages.map((s: { name: string }) => s.name)).toEqual(['One', 'Two', 'Closed won']);
    expect(appended.body.data.stages[2]).toMatchObject({ position: 2, probability: 1, color: '#00ff00', type: 'won' });

    const inserted = await stack.api.post(`/pipelines/${pipeline.id}/stages`, { name: 'Zero', type: 'open', position: 0, probability: 0.1 });
    expect(inserted.status).toBe(201);
    expect(inserted.body.data.stages.map((s: { name: string; position: number }) => [s.name, s.position])).toEqual([
      ['Zero', 0],
      ['One', 1],
      ['Two', 2],
      ['Closed won', 3],
    ]);

    expect((await stack.api.post(`/pipelines/${pipeline.id}/stages`, { name: 'Far', type: 'open', position: 9 })).status).toBe(400);
    expect((await stack.api.post(`/pipelines/${pipeline.id}/stages`, { name: 'P', type: 'open', probability: 2 })).status).toBe(400);
    expect((await stack.api.post(`/pipelines/${pipeline.id}/stages`, { type: 'open' })).status).toBe(400);
    const dup = await stack.api.post(`/pipelines/${pipeline.id}/stages`, { name: 'one', type: 'open' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('conflict');
    expect((await stack.api.post('/pipelines/pipe_00000000000000000000000000/stages', { name: 'x', type: 'open' })).status).toBe(404);
  });

  it('reorders stages when every id is listed exactly once', async () => {
    const pipeline = await createPipeline();
    const ids: string[] = pipeline.stages.map((s: { id: string }) => s.id);
    const reversed = [...ids].reverse();
    const res = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: reversed });
    expect(res.status).toBe(200);
    expect(res.body.data.stages.map((s: { id: string }) => s.id)).toEqual(reversed);
    expect(res.body.data.stages.map((s: { position: number }) => s.position)).toEqual([0, 1, 2, 3, 4]);
    // Inferred probabilities follow the new order of the open stages; the explicit 0.8 stays.
    const byName = Object.fromEntries(res.body.data.stages.map((s: { name: string; probability: number }) => [s.name, s.probability]));
    expect(byName).toEqual({ Lost: 0, Won: 1, Negotiate: 0.8, Propose: 0.5, Qualify: 0.75 });
    expect((await stack.api.get(`/pipelines/${pipeline.id}`)).body.data.stages.map((s: { id: string }) => s.id)).toEqual(reversed);
  });

  it('answers 409 naming missing, foreign, unknown and duplicate stage ids on reorder', async () => {
    const pipeline = await createPipeline();
    const other = await createPipeline({ name: 'Other' });
    const ids: string[] = pipeline.stages.map((s: { id: string }) => s.id);

    const missing = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: ids.slice(1) });
    expect(missing.status).toBe(409);
    expect(missing.body.error.code).toBe('conflict');
    expect(missing.body.error.message).toContain(ids[0]);
    expect(missing.body.error.details).toEqual([{ field: 'stage_ids', code: 'missing_stage', message: expect.stringContaining(ids[0]) }]);

    const foreign = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: [...ids, other.stages[0].id] });
    expect(foreign.status).toBe(409);
    expect(foreign.body.error.details).toEqual([{ field: 'stage_ids', code: 'unknown_stage', message: expect.stringContaining(other.stages[0].id) }]);

    const duplicate = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: [...ids, ids[2]] });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.details).toEqual([{ field: 'stage_ids', code: 'duplicate_stage', message: expect.stringContaining(ids[2]) }]);

    const unknown = 'stg_01aaaaaaaaaaaaaaaaaaaaaaaa';
    const malformedId = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: [ids[0], 'stg_nope'] });
    expect(malformedId.status).toBe(400);
    expect(malformedId.body.error.details).toEqual([expect.objectContaining({ field: 'stage_ids', message: 'stage_ids must hold stg_ identifiers' })]);

    const mixed = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: [ids[0], ids[0], unknown, ...ids.slice(2)] });
    expect(mixed.status).toBe(409);
    expect(mixed.body.error.details.map((d: { code: string }) => d.code).sort()).toEqual(['duplicate_stage', 'missing_stage', 'unknown_stage']);
    expect(mixed.body.error.message).toContain(ids[1]);
    expect(mixed.body.error.message).toContain(unknown);

    const malformed = await stack.api.put(`/pipelines/${pipeline.id}/stages`, { stage_ids: 'all' });
    expect(malformed.status).toBe(400);
    // Nothing changed.
    expect((await stack.api.get(`/pipelines/${pipeline.id}`)).body.data.stages.map((s: { id: string }) => s.id)).toEqual(ids);
  });

  it('deletes an empty stage and keeps positions dense; refuses a stage holding deals unless told where to move them', async () => {
    const pipeline = await createPipeline();
    const [qualify, propose, negotiate] = pipeline.stages;
    const removed = await stack.api.delete(`/pipelines/${pipeline.id}/stages/${propose.id}`);
    expect(removed.status).toBe(204);
    const after = (await stack.api.get(`/pipelines/${pipeline.id}`)).body.data;
    expect(after.stages.map((s: { name: string; position: number }) => [s.name, s.position])).toEqual([
      ['Qualify', 0],
      ['Negotiate', 1],
      ['Won', 2],
      ['Lost', 3],
    ]);
    expect((await stack.api.delete(`/pipelines/${pipeline.id}/stages/${propose.id}`)).status).toBe(404);

    const deal = (await stack.api.post('/deals', { name: 'Held', pipeline_id: pipeline.id, stage_id: qualify.id })).body.data;
    const refused = await stack.api.delete(`/pipelines/${pipeline.id}/stages/${qualify.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');

    const badTarget = await stack.api.delete(`/pipelines/${pipeline.id}/stages/${qualify.id}?move_to_stage_id=${qualify.id}`);
    expect(badTarget.status).toBe(400);

    const moved = await stack.api.delete(`/pipelines/${pipeline.id}/stages/${qualify.id}?move_to_stage_id=${negotiate.id}`);
    expect(moved.status).toBe(204);
    const dealAfter = (await stack.api.get(`/deals/${deal.id}`)).body.data;
    expect(dealAfter.stage_id).toBe(negotiate.id);
    const history = (await stack.api.get(`/deals/${deal.id}/history`)).body.data;
    expect(history.map((h: { from_stage_id: string | null; to_stage_id: string }) => [h.from_stage_id, h.to_stage_id])).toEqual([
      [null, qualify.id],
      [qualify.id, negotiate.id],
    ]);
  });

  it('deletes an empty pipeline, refuses one holding deals, and can move its deals to another pipeline', async () => {
    const empty = await createPipeline({ name: 'Empty' });
    expect((await stack.api.delete(`/pipelines/${empty.id}`)).status).toBe(204);
    expect((await stack.api.get(`/pipelines/${empty.id}`)).status).toBe(404);
    expect((await stack.api.delete(`/pipelines/${empty.id}`)).status).toBe(404);

    const full = await createPipeline({ name: 'Full' });
    const target = await createPipeline({ name: 'Target' });
    const deal = (await stack.api.post('/deals', { name: 'D', pipeline_id: full.id, stage_id: full.stages[1].id })).body.data;
    const refused = await stack.api.delete(`/pipelines/${full.id}`);
    expect(refused.status).toBe(409);
    const sameStage = await stack.api.delete(`/pipelines/${full.id}?move_to_stage_id=${full.stages[0].id}`);
    expect(sameStage.status).toBe(400);

    const moved = await stack.api.delete(`/pipelines/${full.id}?move_to_stage_id=${target.stages[3].id}`);
    expect(moved.status).toBe(204);
    const after = (await stack.api.get(`/deals/${deal.id}`)).body.data;
    expect(after).toMatchObject({ pipeline_id: target.id, stage_id: target.stages[3].id, status: 'won' });
  });

  it('hands the default to the oldest remaining pipeline when the default is deleted', async () => {
    // The default before is not the oldest pipeline, so a handover back to it, or to any but the oldest, shows.
    await createPipeline({ name: 'Older', stages: [] });
    const previous = await createPipeline({ name: 'Previous default', is_default: true, stages: [] });
    const fresh = await createPipeline({ name: 'Temporary default', is_default: true, stages: [] });
    expect((await stack.api.listAll('/pipelines')).filter((p) => p.is_default).map((p) => p.id)).toEqual([fresh.id]);
    expect((await stack.api.delete(`/pipelines/${fresh.id}`)).status).toBe(204);
    const all = await stack.api.listAll('/pipelines');
    expect(all[0].id).not.toBe(previous.id);
    expect(all.filter((p) => p.is_default).map((p) => p.id)).toEqual([all[0].id]);
  });

  it('pages pipelines with a keyset cursor', async () => {
    for (let i = 0; i < 3; i++) await createPipeline({ name: `Page ${i}`, stages: [] });
    const all = await stack.api.listAll('/pipelines');
    const first = await stack.api.get('/pipelines?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(typeof first.body.next_cursor).toBe('string');
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await stack.api.get(`/pipelines?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.data.map((p: { id: string }) => p.id));
      cursor = page.body.next_cursor;
      if (!page.body.has_more) expect(page.body.next_cursor).toBeUndefined();
    } while (cursor);
    expect(seen).toEqual(all.map((p) => p.id));
    expect([...seen].sort()).toEqual(seen);
    expect((await stack.api.get('/pipelines?limit=0')).status).toBe(400);
    expect((await stack.api.get('/pipelines?limit=201')).status).toBe(400);
    expect((await stack.api.get('/pipelines?cursor=garbage')).status).toBe(400);
  });

  it('answers 404 for pipelines that do not exist', async () => {
    expect((await stack.api.get('/pipelines/pipe_00000000000000000000000000')).status).toBe(404);
    expect((await stack.api.get('/pipelines/nonsense')).status).toBe(404);
    expect((await stack.api.patch('/pipelines/pipe_00000000000000000000000000', { name: 'x' })).status).toBe(404);
    expect((await stack.api.get('/pipelines/pipe_00000000000000000000000000/deals')).status).toBe(404);
  });
});
