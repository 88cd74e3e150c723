import { randomUUID } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { ReceivedRequest, Receiver } from '../support/webhooks-receiver';

/**
 * Filters on webhook subscriptions (docs/webhooks.md, Filters): a subscription receives exactly the events
 * of its types its filter holds for, in order; the others leave no delivery record; replays honour the
 * filter; PATCH adds and removes it; a filter that names what its event types do not carry is a 400.
 */
describe('Webhook filters', () => {
  let stack: TestStack;
  const receivers: Receiver[] = [];
  let stage: Record<'qualify' | 'propose' | 'won' | 'lost', string>;
  let pipelineId: string;

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' } });
    const stages = [
      { name: 'Qualify', type: 'open' },
      { name: 'Propose', type: 'open' },
      { name: 'Won', type: 'won' },
      { name: 'Lost', type: 'lost' },
    ];
    const pipeline = (await stack.api.post('/pipelines', { name: 'Sales', stages })).body.data;
    pipelineId = pipeline.id;
    const [qualify, propose, won, lost] = pipeline.stages.map((s: { id: string }) => s.id);
    stage = { qualify, propose, won, lost };
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  async function subscribe(body: Record<string, unknown>): Promise<{ id: string; receiver: Receiver; view: Record<string, unknown> }> {
    const receiver = await Receiver.start();
    receivers.push(receiver);
    const res = await stack.api.post('/webhooks', { name: 'filtered', url: receiver.url, ...body });
    if (res.status !== 201) throw new Error(`POST /webhooks answered ${res.status}: ${res.text}`);
    return { id: res.body.data.id, receiver, view: res.body.data };
  }

  async function ok(res: Promise<{ status: number; text: string; body: any }>, status = 200) {
    const answer = await res;
    if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
    return answer.body.data;
  }

  const createDeal = (name: string) => ok(stack.api.post('/deals', { name, pipeline_id: pipelineId, stage_id: stage.qualify }), 201);
  const patchDeal = (id: string, body: Record<string, unknown>) => ok(stack.api.patch(`/deals/${id}`, body));
  const dealOf = (r: ReceivedRequest) => r.json.data.deal_id;
  /** The requests that arrived up to and including the first for which `isLast` holds, once it has arrived. */
  const until = async (receiver: Receiver, isLast: (r: ReceivedRequest) => boolean) => {
    const last = await eventually(async () => receiver.requests.find(isLast), 120_000);
    return receiver.requests.slice(0, receiver.requests.indexOf(last) + 1);
  };

  it('delivers exactly the events the filter holds for: transitions, membership in changed, actor and via', async () => {
    const won = await subscribe({
      event_types: ['deal.updated'],
      filter: { 'data.previous.status': 'open', 'data.current.status': 'won' },
    });
    expect(won.view.filter).toEqual({ 'data.previous.status': 'open', 'data.current.status': 'won' });
    const renamed = await subscribe({ event_types: ['deal.updated'], filter: { 'data.changed': 'name' } });
    const viaBatch = await subscribe({
      event_types: ['contact.created'],
      filter: { 'actor.type': 'api_key', via: 'batch', 'data.email': { $ends_with: '@batch.example' } },
    });

    const a = await createDeal('A');
    const b = await createDeal('B');
    const c = await createDeal('C');
    await patchDeal(a.id, { stage_id: stage.propose }); // open to open: neither
    await patchDeal(b.id, { stage_id: stage.lost }); // open to lost: not won
    await patchDeal(a.id, { stage_id: stage.won }); // open to won: won
    await patchDeal(c.id, { name: 'C renamed' }); // name: renamed
    await patchDeal(b.id, { name: 'B renamed' }); // lost deal renamed: renamed only
    await ok(stack.api.post('/contacts', { email: `single.${randomUUID()}@batch.example` }), 201); // via api: not batch
    await ok(
      stack.api.post('/contacts/batch', {
        operation: 'create',
        items: [{ email: `one.${randomUUID()}@batch.example` }, { email: `two.${randomUUID()}@other.example` }],
      }),
    );
    await patchDeal(c.id, { stage_id: stage.won }); // won only
    // One marker each subscription receives, after everything above: once it arrives, whatever the
    // subscription was sent for the events before it has arrived too.
    const marker = await createDeal('marker');
    await patchDeal(marker.id, { name: 'marker renamed' });
    await patchDeal(marker.id, { stage_id: stage.won });
    await ok(stack.api.post('/contacts/batch', { operation: 'create', items: [{ email: `marker.${randomUUID()}@batch.example` }] }));

    const wonGot = await until(won.receiver, (r) => dealOf(r) === marker.id);
    expect(wonGot.map((r) => [dealOf(r), r.json.data.current])).toEqual([
      [a.id, expect.objectContaining({ status: 'won' })],
      [c.id, expect.objectContaining({ status: 'won' })],
      [marker.id, expect.objectContaining({ status: 'won' })],
    ]);
    const renamedGot = await until(renamed.receiver, (r) => dealOf(r) === marker.id);
    expect(renamedGot.map(dealOf)).toEqual([c.id, b.id, marker.id]);
    const batchGot = await until(viaBatch.receiver, (r) => (r.json.data.email as string).startsWith('marker.'));
    expect(batchGot.map((r) => r.json.data.email)).toEqual([expect.stringMatching(/^one\./), expect.stringMatching(/^marker\./)]);
    expect(batchGot.every((r) => (r.json as any).via === 'batch' && (r.json as any).actor.type === 'api_key')).toBe(true);

    // Dropped events leave no delivery record: the log holds one success per delivered event.
    const deliveries = await ok(stack.api.get(`/webhooks/${renamed.id}/deliveries?limit=200`));
    expect(deliveries.map((d: { event_id: string }) => d.event_id).sort()).toEqual(renamedGot.map((r) => r.json.id).sort());

    // A replay from the first deal.updated sends the filtered events again, and only those.
    const firstUpdate = (await ok(stack.api.get(`/events?type=deal.updated&limit=1`))) as Array<{ id: string }>;
    const before = won.receiver.requests.length;
    await ok(stack.api.post(`/webhooks/${won.id}/replay`, { event_id: firstUpdate[0].id }));
    const markerWin = await createDeal('after replay');
    await patchDeal(markerWin.id, { stage_id: stage.won });
    const replayed = await until(won.receiver, (r) => dealOf(r) === markerWin.id);
    expect(replayed.slice(before).map(dealOf)).toEqual([a.id, c.id, marker.id, markerWin.id]);
  }, 300_000);

  it('delivers by actor.id exactly the writes one key made', async () => {
    const other = await ok(stack.api.post('/apikeys', { name: 'importer', scope: 'read-write' }), 201);
    const sub = await subscribe({ event_types: ['contact.created', 'contact.updated'], filter: { 'actor.type': 'api_key', 'actor.id': other.id } });
    const asOther = stack.api.withKey(other.key);
    await ok(stack.api.post('/contacts', { email: `bootstrap.${randomUUID()}@actor.example` }), 201);
    const contact = await ok(asOther.post('/contacts', { email: `importer.${randomUUID()}@actor.example` }), 201);
    await ok(stack.api.patch(`/contacts/${contact.id}`, { first_name: 'Bootstrap' }));
    await ok(asOther.patch(`/contacts/${contact.id}`, { first_name: 'Importer' }));
    // A last write by the key: once it arrives, anything sent for the writes before it has arrived too.
    await ok(asOther.patch(`/contacts/${contact.id}`, { first_name: 'Marker' }));

    const got = await until(sub.receiver, (r) => (r.json.data.current as { first_name?: string } | undefined)?.first_name === 'Marker');
    expect(got.map((r) => [r.json.type, (r.json as any).actor])).toEqual([
      ['contact.created', { type: 'api_key', id: other.id }],
      ['contact.updated', { type: 'api_key', id: other.id }],
      ['contact.updated', { type: 'api_key', id: other.id }],
    ]);
    expect(got[1].json.data.current).toMatchObject({ first_name: 'Importer' });
  }, 300_000);

  it('filters the log of updates by GET and by POST exactly as a client filters the unfiltered log', async () => {
    const deal = await createDeal('log');
    await patchDeal(deal.id, { stage_id: stage.propose });
    await patchDeal(deal.id, { name: 'log renamed', value: 7 });
    await patchDeal(deal.id, { stage_id: stage.won });
    const all = await eventually(async () => {
      const events = await stack.api.listAll('/events?type=deal.updated');
      return events.some((e) => e.data.deal_id === deal.id && e.data.current.status === 'won') ? events : undefined;
    }, 120_000);
    const walk = async (read: (cursor?: string) => Promise<{ status: number; text: string; body: any }>) => {
      const ids: string[] = [];
      for (let cursor: string | undefined; ;) {
        const res = await read(cursor);
        if (res.status !== 200) throw new Error(`answered ${res.status}: ${res.text}`);
        ids.push(...res.body.data.map((e: { id: string }) => e.id));
        if (!res.body.has_more) return ids;
        cursor = res.body.next_cursor;
      }
    };
    const cases: Array<[Record<string, unknown>, (e: any) => boolean]> = [
      [{ 'data.previous.status': 'open', 'data.current.status': 'won' }, (e) => e.data.previous.status === 'open' && e.data.current.status === 'won'],
      [{ 'data.changed': 'name' }, (e) => e.data.changed.includes('name')],
      [{ 'data.changed': { $in: ['value', 'status'] }, via: { $ne: 'import' } }, (e) => e.data.changed.some((c: string) => ['value', 'status'].includes(c))],
      [{ 'data.changed': { $nin: ['name'] }, 'actor.type': 'api_key' }, (e) => !e.data.changed.includes('name') && e.actor.type === 'api_key'],
    ];
    for (const [filter, expected] of cases) {
      const want = all.filter(expected).map((e) => e.id);
      expect(want.length).toBeGreaterThan(0);
      expect(want.length).toBeLessThan(all.length);
      const query = `/events?type=deal.updated&limit=2&filter=${encodeURIComponent(JSON.stringify(filter))}`;
      const byGet = await walk((cursor) => stack.api.get(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      const byPost = await walk((cursor) => stack.api.post('/events/query', { type: 'deal.updated', filter, limit: 2, cursor }));
      // Events logged after the unfiltered read may follow; what it saw must come first and in order.
      expect(byGet.slice(0, want.length)).toEqual(want);
      expect(byPost.slice(0, want.length)).toEqual(want);
    }
  }, 300_000);

  it('adds a filter with PATCH, and removes it with null', async () => {
    const sub = await subscribe({ event_types: ['deal.updated'] });
    expect(sub.view.filter).toBeNull();
    const deal = await createDeal('patched');
    await patchDeal(deal.id, { name: 'first' });
    await sub.receiver.waitFor(1, undefined, 120_000);

    const added = await ok(stack.api.patch(`/webhooks/${sub.id}`, { filter: { 'data.changed': { $in: ['value'] } } }));
    expect(added.filter).toEqual({ 'data.changed': { $in: ['value'] } });
    expect((await ok(stack.api.get(`/webhooks/${sub.id}`))).filter).toEqual({ 'data.changed': { $in: ['value'] } });
    await patchDeal(deal.id, { name: 'second' });
    await patchDeal(deal.id, { value: 100 });
    const withFilter = await until(sub.receiver, (r) => (r.json.data.changed as string[]).includes('value'));
    expect(withFilter.map((r) => r.json.data.current)).toEqual([{ name: 'first' }, expect.objectContaining({ value: 100 })]);

    const removed = await ok(stack.api.patch(`/webhooks/${sub.id}`, { filter: null }));
    expect(removed.filter).toBeNull();
    await patchDeal(deal.id, { name: 'third' });
    // A marker the subscription receives after everything above: a late or repeated delivery of any of it
    // (the filtered-out 'second' included) would arrive before it.
    await patchDeal(deal.id, { name: 'marker' });
    const all = await until(sub.receiver, (r) => (r.json.data.current as Record<string, unknown>).name === 'marker');
    expect(all.map((r) => r.json.data.current)).toEqual([{ name: 'first' }, expect.objectContaining({ value: 100 }), { name: 'third' }, { name: 'marker' }]);
    expect(all.map((r) => r.json.data.changed)).toEqual([['name'], expect.arrayContaining(['value']), ['name'], ['name']]);
  }, 300_000);

  it('answers one 400 naming each path a filter gets wrong', async () => {
    const post = (body: Record<string, unknown>) => stack.api.post('/webhooks', { name: 'bad', url: 'http://127.0.0.1:9/hook', ...body });
    const fields = (res: { body: any }) => res.body.error.details.map((d: { field: string }) => d.field);

    const unknown = await post({ event_types: ['deal.updated'], filter: { 'data.current.email': 'a@b.c', 'data.current.status': 'won', 'data.nope': 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('validation_failed');
    expect(fields(unknown)).toEqual(['filter.data.current.email', 'filter.data.nope']);
    // The same path exists for contacts.
    expect((await post({ event_types: ['contact.updated'], filter: { 'data.current.email': 'a@b.c' } })).status).toBe(201);

    const wrongOperator = await post({
      event_types: ['deal.updated'],
      filter: { 'data.current.value': { $contains: '1' }, 'data.current.status': { $regex: 'w' }, via: 'fax', 'data.changed': { $gt: null } },
    });
    expect(wrongOperator.status).toBe(400);
    expect(fields(wrongOperator)).toEqual([
      'filter.data.current.value.$contains',
      'filter.data.current.status.$regex',
      'filter.via',
      'filter.data.changed.$gt',
    ]);

    let deep: Record<string, unknown> = { type: 'deal.updated' };
    for (let i = 0; i < 9; i++) deep = { $and: [deep] };
    const tooDeep = await post({ event_types: ['deal.updated'], filter: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.details[0].code).toBe('too_deep');

    const tooMany = await post({ filter: { 'actor.id': { $in: Array.from({ length: 501 }, (_, i) => `key_${i}`) } } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details[0].code).toBe('too_many_values');
    expect((await post({ filter: 'data.x' })).status).toBe(400);

    // PATCH checks the filter against the types it will apply to, whichever changes.
    const sub = await ok(
      stack.api.post('/webhooks', { name: 'ok', url: 'http://127.0.0.1:9/hook', event_types: ['contact.updated'], filter: { 'data.current.email': 'x@y.z' } }),
      201,
    );
    const retyped = await stack.api.patch(`/webhooks/${sub.id}`, { event_types: ['deal.updated'] });
    expect(retyped.status).toBe(400);
    expect(fields(retyped)).toEqual(['filter.data.current.email']);
    const refiltered = await stack.api.patch(`/webhooks/${sub.id}`, { filter: { 'data.current.value': 5 } });
    expect(refiltered.status).toBe(400);
    expect(fields(refiltered)).toEqual(['filter.data.current.value']);
  }, 120_000);
});
