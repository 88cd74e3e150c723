import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

/** What every entry of the deals service carries besides its own values. */
interface Entry {
  id: string;
  object: string;
  record_id: string;
  action: string;
  changed: string[];
  previous: Record<string, unknown> | null;
  current: Record<string, unknown> | null;
  actor: { type: string; id: string | null };
  via: string;
  request_id: string | null;
  occurred_at: string;
}

interface Stage {
  id: string;
  name: string;
}

/** Change history of deals and pipelines (docs/changes.md): every write the deals service makes records its entries. */
describe('change history of deals and pipelines', () => {
  let stack: TestStack;
  let keyId: string;
  /** The actor of what the stack's own key does. */
  let byKey: { type: string; id: string };

  beforeAll(async () => {
    // Deals go stale within seconds, so the stale trigger's origin can be checked without waiting days.
    stack = await startStack({ env: { DEALS_STALE_AFTER_SECONDS: '2', DEALS_STALE_CHECK_INTERVAL_MS: '200' } });
    keyId = (await stack.api.get('/apikeys')).body.data[0].id;
    byKey = { type: 'api_key', id: keyId };
  });
  afterAll(() => stack?.stop());

  const history = async (path: string): Promise<Entry[]> => {
    const res = await stack.api.get(path);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const eventsOf = async (type: string, idField: string, id: string) =>
    (
      await stack.api.listAll<{ type: string; actor: Entry['actor']; via: string; request_id: string | null; data: Record<string, any> }>(
        `/events?type=${type}`,
      )
    ).filter((e) => e.data[idField] === id);

  async function pipeline(stages: Array<{ name: string; type: 'open' | 'won' | 'lost' }>): Promise<{ id: string; name: string; stages: Stage[] }> {
    const res = await stack.api.post('/pipelines', { name: `P ${tag()}`, stages });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  it('records a deal created, updated, moved and deleted; a no-op records nothing; the history outlives the deal', async () => {
    expect((await stack.api.post('/objects/deals/fields', { name: 'tier', type: 'number' })).status).toBe(201);
    const sales = await pipeline([
      { name: 'Open', type: 'open' },
      { name: 'Propose', type: 'open' },
      { name: 'Won', type: 'won' },
    ]);
    const [open, propose, won] = sales.stages;
    const created = await stack.api.post(
      '/deals',
      { name: 'Pilot', pipeline_id: sales.id, stage_id: open.id, value: 100, custom_fields: { tier: 2 } },
      { headers: { 'X-Request-Id': 'deal-create-1' } },
    );
    expect(created.status).toBe(201);
    const id: string = created.body.data.id;

    expect((await stack.api.patch(`/deals/${id}`, { name: 'Renamed', value: 100 }, { headers: { 'X-Request-Id': 'deal-patch-1' } })).status).toBe(200);
    // Nothing changes: no entry, no event.
    expect((await stack.api.patch(`/deals/${id}`, { name: 'Renamed', custom_fields: { tier: 2 } })).status).toBe(200);
    expect((await stack.api.patch(`/deals/${id}`, { stage_id: won.id, custom_fields: { tier: 3 } })).status).toBe(200);
    expect((await stack.api.post(`/deals/${id}/stage`, { stage_id: propose.id }, { headers: { 'X-Request-Id': 'deal-move-1' } })).status).toBe(200);
    // The stage it is already in: nothing moves.
    expect((await stack.api.post(`/deals/${id}/stage`, { stage_id: propose.id })).status).toBe(200);

    const entries = await history(`/deals/${id}/changes`);
    expect(entries.map((e) => e.action)).toEqual(['created', 'updated', 'updated', 'updated']);
    const [first, renamed, closed, moved] = entries;
    expect(first).toMatchObject({ object: 'deals', record_id: id, previous: null, actor: byKey, via: 'api', request_id: 'deal-create-1' });
    expect(first.current).toEqual({
      name: 'Pilot',
      pipeline_id: sales.id,
      stage_id: open.id,
      value: 100,
      currency: 'USD',
      value_from_line_items: false,
      status: 'open',
      'custom_fields.tier': 2,
    });
    expect(first.changed.sort()).toEqual(Object.keys(first.current!).sort());
    expect(renamed).toMatchObject({ changed: ['name'], previous: { name: 'Pilot' }, current: { name: 'Renamed' }, request_id: 'deal-patch-1' });
    expect(closed).toMatchObject({
      changed: ['custom_fields.tier', 'stage_id', 'status'],
      previous: { 'custom_fields.tier': 2, stage_id: open.id, status: 'open' },
      current: { 'custom_fields.tier': 3, stage_id: won.id, status: 'won' },
    });
    expect(moved).toMatchObject({
      changed: ['stage_id', 'status'],
      previous: { stage_id: won.id, status: 'won' },
      current: { stage_id: propose.id, status: 'open' },
      actor: byKey,
      request_id: 'deal-move-1',
    });

    // Stage history names the same actor: a key with no team member is recorded as changed_by_key_id.
    const stageHistory = (await stack.api.get(`/deals/${id}/history`)).body.data as Array<{ changed_by_key_id: string }>;
    expect(stageHistory.map((h) => h.changed_by_key_id)).toEqual([keyId, keyId, keyId]);

    // deal.updated carries the values before and after, beside the changed field names.
    const updates = await eventually(async () => {
      const found = await eventsOf('deal.updated', 'deal_id', id);
      return found.length >= 2 ? found : undefined;
    });
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatchObject({ actor: byKey, via: 'api', request_id: 'deal-patch-1' });
    expect(updates[0].data).toEqual({
      deal_id: id,
      changed: ['name'],
      previous: { name: 'Pilot' },
      current: { name: 'Renamed' },
      version: expect.any(Number),
      record: expect.objectContaining({ id, name: 'Renamed' }),
    });
    expect(updates[1].data).toMatchObject({
      changed: ['custom_fields', 'stage_id', 'stage_entered_at', 'status'],
      previous: { custom_fields: { tier: 2 }, stage_id: open.id, status: 'open', stage_entered_at: created.body.data.stage_entered_at },
      current: { custom_fields: { tier: 3 }, stage_id: won.id, status: 'won' },
    });

    expect((await stack.api.delete(`/deals/${id}`, { headers: { 'X-Request-Id': 'deal-delete-1' } })).status).toBe(204);
    const after = await history(`/deals/${id}/changes`);
    expect(after.map((e) => e.id).slice(0, 4)).toEqual(entries.map((e) => e.id));
    const deleted = after[4];
    expect(deleted).toMatchObject({ action: 'deleted', current: null, actor: byKey, request_id: 'deal-delete-1' });
    expect(deleted.previous).toEqual({
      name: 'Renamed',
      pipeline_id: sales.id,
      stage_id: propose.id,
      value: 100,
      currency: 'USD',
      value_from_line_items: false,
      status: 'open',
      'custom_fields.tier': 3,
    });

    expect((await history(`/changes?record_id=${id}`)).map((e) => e.id)).toEqual(after.map((e) => e.id));
    const allDeals = await stack.api.listAll<Entry>('/changes?object=deals');
    expect(allDeals.every((e) => e.object === 'deals')).toBe(true);
    expect(allDeals.filter((e) => e.record_id === id).map((e) => e.id)).toEqual(after.map((e) => e.id));
    expect((await stack.api.get('/deals/deal_00000000000000000000000000/changes')).status).toBe(404);
  });

  it('attributes changes made with a key that belongs to a user to that user, in the entry, the event and stage history alike', async () => {
    const user = (await stack.api.post('/users', { name: 'Key Holder', email: `holder.${tag()}@example.com` })).body.data;
    const key = (await stack.api.post('/apikeys', { name: 'personal', scope: 'read-write', user_id: user.id })).body.data;
    const personal = stack.api.withKey(key.key);
    const sales = await pipeline([
      { name: 'A', type: 'open' },
      { name: 'B', type: 'open' },
    ]);
    const deal = (await personal.post('/deals', { name: 'Mine', pipeline_id: sales.id, stage_id: sales.stages[0].id })).body.data;
    expect((await personal.post(`/deals/${deal.id}/stage`, { stage_id: sales.stages[1].id }, { headers: { 'X-Request-Id': 'mine-move' } })).status).toBe(200);

    const entries = await history(`/deals/${deal.id}/changes`);
    const asUser = { type: 'user', id: user.id };
    expect(entries).toEqual([
      expect.objectContaining({ action: 'created', actor: asUser, via: 'api' }),
      expect.objectContaining({ action: 'updated', changed: ['stage_id'], actor: asUser, request_id: 'mine-move' }),
    ]);
    const stageHistory = (await stack.api.get(`/deals/${deal.id}/history`)).body.data as Array<{ changed_by: string; changed_by_key_id: string }>;
    expect(stageHistory.map((h) => h.changed_by)).toEqual([asUser.id, asUser.id]);
    expect((await history(`/changes?actor_id=${user.id}&object=deals`)).map((e) => e.id)).toEqual(entries.map((e) => e.id));
    const [createdEvent] = await eventually(async () => {
      const found = await eventsOf('deal.created', 'deal_id', deal.id);
      return found.length ? found : undefined;
    });
    expect(createdEvent.actor).toEqual(asUser);
  });

  it('records every deal a deleted stage or pipeline moves, and the pipeline changes themselves', async () => {
    const first = await pipeline([
      { name: 'Lead', type: 'open' },
      { name: 'Doomed', type: 'open' },
      { name: 'Lost', type: 'lost' },
    ]);
    const [lead, doomed, lost] = first.stages;
    const a = (await stack.api.post('/deals', { name: 'A', pipeline_id: first.id, stage_id: doomed.id })).body.data;
    const b = (await stack.api.post('/deals', { name: 'B', pipeline_id: first.id, stage_id: doomed.id })).body.data;
    const removed = await stack.api.delete(`/pipelines/${first.id}/stages/${doomed.id}?move_to_stage_id=${lost.id}`, {
      headers: { 'X-Request-Id': 'stage-delete' },
    });
    expect(removed.status).toBe(204);
    for (const deal of [a, b]) {
      const [, movedEntry] = await history(`/deals/${deal.id}/changes`);
      expect(movedEntry).toMatchObject({
        action: 'updated',
        changed: ['stage_id', 'status'],
        previous: { stage_id: doomed.id, status: 'open' },
        current: { stage_id: lost.id, status: 'lost' },
        actor: byKey,
        request_id: 'stage-delete',
      });
    }
    const stageHistory = (await stack.api.get(`/deals/${a.id}/history`)).body.data as Array<{ changed_by_key_id: string; to_stage_id: string }>;
    expect(stageHistory.map((h) => [h.to_stage_id, h.changed_by_key_id])).toEqual([
      [doomed.id, keyId],
      [lost.id, keyId],
    ]);

    const pipelineEntries = await history(`/pipelines/${first.id}/changes`);
    expect(pipelineEntries.map((e) => [e.action, e.changed])).toEqual([
      ['created', expect.arrayContaining(['name', 'stages'])],
      ['updated', ['stages']],
    ]);
    expect((pipelineEntries[1].previous!.stages as Stage[]).map((s) => s.id)).toEqual([lead.id, doomed.id, lost.id]);
    expect((pipelineEntries[1].current!.stages as Stage[]).map((s) => s.id)).toEqual([lead.id, lost.id]);

    // Deleting the pipeline moves its deals into another pipeline: the entry names the new pipeline too.
    const second = await pipeline([{ name: 'Inbox', type: 'open' }]);
    expect((await stack.api.delete(`/pipelines/${first.id}?move_to_stage_id=${second.stages[0].id}`)).status).toBe(204);
    const [, , reopened] = await history(`/deals/${a.id}/changes`);
    expect(reopened).toMatchObject({
      changed: ['stage_id', 'pipeline_id', 'status'],
      previous: { stage_id: lost.id, pipeline_id: first.id, status: 'lost' },
      current: { stage_id: second.stages[0].id, pipeline_id: second.id, status: 'open' },
    });
    const gone = await history(`/pipelines/${first.id}/changes`);
    expect(gone).toHaveLength(3);
    expect(gone[2]).toMatchObject({
      action: 'deleted',
      current: null,
      previous: { name: expect.any(String), stages: [expect.objectContaining({ id: lead.id }), expect.objectContaining({ id: lost.id })] },
    });
  });

  it('records pipeline renames, stage changes and default moves, with previous and current on pipeline.updated', async () => {
    const sales = await pipeline([
      { name: 'One', type: 'open' },
      { name: 'Two', type: 'open' },
    ]);
    const formerDefault = (await stack.api.listAll<{ id: string; is_default: boolean }>('/pipelines')).find((p) => p.is_default)!;
    expect((await stack.api.patch(`/pipelines/${sales.id}`, { name: 'Renamed pipeline' })).status).toBe(200);
    expect((await stack.api.patch(`/pipelines/${sales.id}`, { name: 'Renamed pipeline' })).status).toBe(200);
    expect((await stack.api.post(`/pipelines/${sales.id}/stages`, { name: 'Three', type: 'won' })).status).toBe(201);
    const reordered = [sales.stages[1].id, sales.stages[0].id];
    const withThree = (await stack.api.get(`/pipelines/${sales.id}`)).body.data.stages as Stage[];
    expect((await stack.api.put(`/pipelines/${sales.id}/stages`, { stage_ids: [...reordered, withThree[2].id] })).status).toBe(200);
    expect((await stack.api.patch(`/pipelines/${sales.id}`, { is_default: true })).status).toBe(200);

    const entries = await history(`/pipelines/${sales.id}/changes`);
    expect(entries.map((e) => [e.action, e.changed])).toEqual([
      ['created', expect.arrayContaining(['name', 'is_default', 'stages'])],
      ['updated', ['name']],
      ['updated', ['stages']],
      ['updated', ['stages']],
      ['updated', ['is_default']],
    ]);
    expect(entries[1]).toMatchObject({ object: 'pipelines', previous: { name: sales.name }, current: { name: 'Renamed pipeline' }, actor: byKey, via: 'api' });
    expect((entries[2].current!.stages as Stage[]).map((s) => s.name)).toEqual(['One', 'Two', 'Three']);
    expect((entries[3].current!.stages as Stage[]).map((s) => s.name)).toEqual(['Two', 'One', 'Three']);
    expect(entries[4]).toMatchObject({ previous: { is_default: false }, current: { is_default: true } });
    const demoted = await history(`/pipelines/${formerDefault.id}/changes`);
    expect(demoted[demoted.length - 1]).toMatchObject({ changed: ['is_default'], previous: { is_default: true }, current: { is_default: false } });

    const updates = await eventually(async () => {
      const found = await eventsOf('pipeline.updated', 'pipeline_id', sales.id);
      return found.length >= 4 ? found : undefined;
    });
    expect(updates[0].data).toEqual({ pipeline_id: sales.id, changed: ['name'], previous: { name: sales.name }, current: { name: 'Renamed pipeline' } });
    expect(updates[1].data).toMatchObject({
      changed: ['stages'],
      previous: { stages: [expect.objectContaining({ name: 'One' }), expect.objectContaining({ name: 'Two' })] },
    });
    expect(updates[3].data).toEqual({ pipeline_id: sales.id, changed: ['is_default'], previous: { is_default: false }, current: { is_default: true } });
  });

  it('records batch writes through the batch channel, one entry per applied item', async () => {
    const sales = await pipeline([
      { name: 'Open', type: 'open' },
      { name: 'Won', type: 'won' },
    ]);
    const [open, won] = sales.stages;
    const created = await stack.api.post(
      '/deals/batch',
      {
        operation: 'create',
        items: [
          { name: 'B1', pipeline_id: sales.id, stage_id: open.id, value: 10 },
          { name: 'B2', pipeline_id: sales.id, stage_id: won.id },
          { name: 'Bad', pipeline_id: sales.id, stage_id: 'stage_00000000000000000000000000' },
        ],
      },
      { headers: { 'X-Request-Id': 'batch-create' } },
    );
    expect(created.body.data.map((r: { status: number }) => r.status)).toEqual([201, 201, 400]);
    const [b1, b2] = created.body.data.map((r: { data: { id: string } }) => r.data?.id);
    const updated = await stack.api.post('/deals/batch', {
      operation: 'update',
      items: [
        { id: b1, stage_id: won.id, value: 20 },
        { id: b2, name: 'B2' },
      ],
    });
    expect(updated.body.data.map((r: { status: number }) => r.status)).toEqual([200, 200]);
    expect((await stack.api.post('/deals/batch', { operation: 'delete', items: [{ id: b2 }] })).body.data[0].status).toBe(204);

    const one = await history(`/deals/${b1}/changes`);
    expect(one).toEqual([
      expect.objectContaining({
        action: 'created',
        via: 'batch',
        actor: byKey,
        request_id: 'batch-create',
        current: { name: 'B1', pipeline_id: sales.id, stage_id: open.id, value: 10, currency: 'USD', value_from_line_items: false, status: 'open' },
      }),
      expect.objectContaining({
        action: 'updated',
        via: 'batch',
        changed: ['value', 'stage_id', 'status'],
        previous: { value: 10, stage_id: open.id, status: 'open' },
        current: { value: 20, stage_id: won.id, status: 'won' },
      }),
    ]);
    // B2's update changed nothing (its name was already B2): created, then deleted, nothing between.
    const two = await history(`/deals/${b2}/changes`);
    expect(two.map((e) => [e.action, e.via])).toEqual([
      ['created', 'batch'],
      ['deleted', 'batch'],
    ]);
    expect(two[1].previous).toMatchObject({ name: 'B2', stage_id: won.id, status: 'won' });
    const [batchUpdate] = await eventually(async () => {
      const found = await eventsOf('deal.updated', 'deal_id', b1);
      return found.length ? found : undefined;
    });
    expect(batchUpdate.via).toBe('batch');
    expect(batchUpdate.data).toMatchObject({
      changed: ['value', 'stage_id', 'stage_entered_at', 'status'],
      previous: { value: 10, stage_id: open.id, status: 'open' },
      current: { value: 20, stage_id: won.id, status: 'won' },
    });
  });

  it('records the deals an import creates through the import channel', async () => {
    const sales = await pipeline([{ name: 'New', type: 'open' }]);
    const csv = ['name,pipeline_id,stage_id,value', `Imported one,${sales.id},${sales.stages[0].id},300`].join('\n');
    const res = await fetch(`${stack.gateway.url}/imports?object=deals`, {
      method: 'POST',
      headers: { 'X-Api-Key': stack.apiKey, 'Content-Type': 'text/csv', 'X-Request-Id': 'deal-import' },
      body: csv,
    });
    expect(res.status).toBe(202);
    const [deal] = await eventually(async () => {
      const found = (await stack.api.get(`/deals?pipeline_id=${sales.id}`)).body.data;
      return found.length ? found : undefined;
    }, 120_000);
    const [entry] = await history(`/deals/${deal.id}/changes`);
    expect(entry).toMatchObject({
      action: 'created',
      via: 'import',
      actor: byKey,
      request_id: 'deal-import',
      current: expect.objectContaining({ name: 'Imported one', value: 300 }),
    });
  });

  it('records deals re-pointed by a contact merge, and unlinked by the system when their contact or company is deleted', async () => {
    const sales = await pipeline([{ name: 'Open', type: 'open' }]);
    const winner = (await stack.api.post('/contacts', { email: `winner.${tag()}@example.com` })).body.data;
    const loser = (await stack.api.post('/contacts', { email: `loser.${tag()}@example.com` })).body.data;
    const company = (await stack.api.post('/companies', { name: `Acme ${tag()}` })).body.data;
    const deal = (
      await stack.api.post('/deals', { name: 'Linked', pipeline_id: sales.id, stage_id: sales.stages[0].id, contact_id: loser.id, company_id: company.id })
    ).body.data;

    expect((await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id }, { headers: { 'X-Request-Id': 'merge-1' } })).status).toBe(
      200,
    );
    const [, merged] = await history(`/deals/${deal.id}/changes?field=contact_id`);
    expect(merged).toMatchObject({
      action: 'updated',
      changed: ['contact_id'],
      previous: { contact_id: loser.id },
      current: { contact_id: winner.id },
      via: 'merge',
      actor: byKey,
      request_id: 'merge-1',
    });
    // The association moved with it, in the same request (docs/associations.md).
    const moved = (await history(`/deals/${deal.id}/changes?field=contacts`)).filter((e) => e.via === 'merge');
    expect(moved.map((e) => [e.changed, e.previous, e.current])).toEqual([
      [[`contacts.${loser.id}`], { [`contacts.${loser.id}`]: { role: null, is_primary: true } }, { [`contacts.${loser.id}`]: null }],
      [[`contacts.${winner.id}`], { [`contacts.${winner.id}`]: null }, { [`contacts.${winner.id}`]: { role: null, is_primary: true } }],
    ]);

    expect((await stack.api.delete(`/contacts/${winner.id}`)).status).toBe(204);
    expect((await stack.api.delete(`/companies/${company.id}`)).status).toBe(204);
    // Association entries aside, the deal's own fields: created, the merge, then the two clean-ups.
    const entries = await eventually(async () => {
      const found = (await history(`/deals/${deal.id}/changes`)).filter((e) => !e.changed[0].startsWith('contacts.'));
      return found.length >= 4 ? found : undefined;
    });
    const unlinked = entries.slice(2).sort((x, y) => x.changed[0].localeCompare(y.changed[0]));
    expect(unlinked).toEqual([
      expect.objectContaining({
        changed: ['company_id'],
        previous: { company_id: company.id },
        current: { company_id: null },
        actor: { type: 'system', id: 'company_cleanup' },
        via: 'system',
        request_id: null,
      }),
      expect.objectContaining({
        changed: ['contact_id'],
        previous: { contact_id: winner.id },
        current: { contact_id: null },
        actor: { type: 'system', id: 'contact_cleanup' },
        via: 'system',
        request_id: null,
      }),
    ]);
    const updates = await eventually(async () => {
      const found = await eventsOf('deal.updated', 'deal_id', deal.id);
      return found.length >= 3 ? found : undefined;
    });
    expect(updates[0]).toMatchObject({
      via: 'merge',
      data: { changed: ['contact_id'], previous: { contact_id: loser.id }, current: { contact_id: winner.id } },
    });
    expect(
      updates
        .slice(1)
        .map((e) => e.actor.id)
        .sort(),
    ).toEqual(['company_cleanup', 'contact_cleanup']);
  });

  it('reports stale deals as the system, through the system channel', async () => {
    const sales = await pipeline([{ name: 'Open', type: 'open' }]);
    const deal = (await stack.api.post('/deals', { name: 'Quiet', pipeline_id: sales.id, stage_id: sales.stages[0].id })).body.data;
    const [stale] = await eventually(async () => {
      const found = await eventsOf('trigger.deal.stale', 'deal_id', deal.id);
      return found.length ? found : undefined;
    }, 120_000);
    expect(stale).toMatchObject({ actor: { type: 'system', id: 'stale_deals' }, via: 'system', request_id: null });
    // Reporting changes no field of the deal: its history holds only its creation.
    expect((await history(`/deals/${deal.id}/changes`)).map((e) => e.action)).toEqual(['created']);
  });
});
