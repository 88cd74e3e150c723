import { DomainEvent, eventSubject, eventSubjectWildcard, Ops } from '@crm/contracts';
import { ensureEventStream } from '@crm/messaging';
import { randomUUID } from 'crypto';
import { connect, JSONCodec, NatsConnection } from 'nats';
import { eventually } from '../support/api-client';
import { askService, startStack, TestStack } from '../support/stack';

const DAY_MS = 86_400_000;
const SERVICE_USER = 'user_00000000000000000000000000';

describe('Deals', () => {
  let stack: TestStack;
  let nc: NatsConnection;
  const events: DomainEvent[] = [];
  let pipeline: { id: string; stages: Array<{ id: string; name: string; type: string }> };
  let other: typeof pipeline;
  let stage: Record<'qualify' | 'propose' | 'negotiate' | 'won' | 'lost', string>;

  beforeAll(async () => {
    stack = await startStack();
    nc = await connect({ servers: stack.env.NATS_URL });
    const codec = JSONCodec<DomainEvent>();
    nc.subscribe(eventSubjectWildcard(stack.namespace), { callback: (_err, msg) => events.push(codec.decode(msg.data)) });
    await nc.flush();
    const stages = [
      { name: 'Qualify', type: 'open' },
      { name: 'Propose', type: 'open' },
      { name: 'Negotiate', type: 'open' },
      { name: 'Won', type: 'won' },
      { name: 'Lost', type: 'lost' },
    ];
    pipeline = (await stack.api.post('/pipelines', { name: 'Sales', stages })).body.data;
    other = (await stack.api.post('/pipelines', { name: 'Other', stages })).body.data;
    const [qualify, propose, negotiate, won, lost] = pipeline.stages.map((s) => s.id);
    stage = { qualify, propose, negotiate, won, lost };
  });
  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
  });

  /** A team member to own deals; owner_id must name an existing user. */
  async function newUser(name = 'Owner'): Promise<string> {
    const res = await stack.api.post('/users', { name, email: `${name.toLowerCase().replace(/\W/g, '')}.${randomUUID()}@example.com` });
    if (res.status !== 201) throw new Error(`user create answered ${res.status}: ${res.text}`);
    return res.body.data.id;
  }

  async function createDeal(body: Record<string, unknown> = {}) {
    const res = await stack.api.post('/deals', { name: 'Acme renewal', pipeline_id: pipeline.id, stage_id: stage.qualify, ...body });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
    return res.body.data;
  }

  function eventsFor(dealId: string, type?: string): DomainEvent[] {
    return events.filter((e) => 'deal_id' in e.data && e.data.deal_id === dealId && (!type || e.type === type));
  }

  async function waitForEvent(dealId: string, type: string, count = 1): Promise<DomainEvent[]> {
    return eventually(async () => (eventsFor(dealId, type).length >= count ? eventsFor(dealId, type) : undefined));
  }

  /** Publishes an event as the contacts service would, onto the shared stream. */
  async function publish(type: string, data: Record<string, unknown>): Promise<void> {
    await ensureEventStream(nc, stack.namespace);
    const event = { id: `evt_${randomUUID()}`, type, occurred_at: new Date().toISOString(), data };
    await nc.jetstream().publish(eventSubject(stack.namespace, type), JSONCodec().encode(event), { msgID: event.id });
  }

  describe('create', () => {
    it('creates a deal with defaults, zero ages and an initial history record', async () => {
      const res = await stack.api.post('/deals', { name: 'Acme', pipeline_id: pipeline.id, stage_id: stage.qualify });
      expect(res.status).toBe(201);
      const deal = res.body.data;
      expect(deal.id).toMatch(/^deal_[0-9a-z]{26}$/);
      expect(deal).toMatchObject({
        name: 'Acme',
        pipeline_id: pipeline.id,
        stage_id: stage.qualify,
        contact_id: null,
        company_id: null,
        value: 0,
        currency: 'USD',
        status: 'open',
        expected_close: null,
        owner_id: null,
        source: null,
        metadata: {},
        last_activity_at: null,
        days_in_stage: 0,
        deal_age_days: 0,
      });
      expect(deal.stage_entered_at).toBe(deal.created_at);
      expect(deal.relationships).toBeUndefined();

      const history = await stack.api.get(`/deals/${deal.id}/history`);
      expect(history.status).toBe(200);
      expect(history.body).toEqual({
        data: [
          {
            id: expect.stringMatching(/^sh_[0-9a-z]{26}$/),
            deal_id: deal.id,
            from_stage_id: null,
            to_stage_id: stage.qualify,
            changed_at: deal.created_at,
            changed_by: SERVICE_USER,
            changed_by_key_id: expect.stringMatching(/^key_/),
          },
        ],
        has_more: false,
      });
      const [created] = await waitForEvent(deal.id, 'deal.created');
      expect(created.data).toMatchObject({ deal_id: deal.id, pipeline_id: pipeline.id, stage_id: stage.qualify, value: 0, currency: 'USD', status: 'open' });
    });

    it('stores every field given, accepting a lowercase currency', async () => {
      const ownerId = await newUser();
      const deal = await createDeal({
        value: 1_250_000,
        currency: 'eur',
        expected_close: '2031-03-31T00:00:00Z',
        owner_id: ownerId,
        source: 'referral',
        metadata: { region: 'north' },
      });
      expect(deal).toMatchObject({
        value: 1_250_000,
        currency: 'EUR',
        expected_close: '2031-03-31T00:00:00.000Z',
        owner_id: ownerId,
        source: 'referral',
        metadata: { region: 'north' },
      });
      const max = await createDeal({ value: Number.MAX_SAFE_INTEGER });
      expect((await stack.api.get(`/deals/${max.id}`)).body.data.value).toBe(Number.MAX_SAFE_INTEGER);
    });

    it('creates a deal placed in a won stage as won', async () => {
      const deal = await createDeal({ stage_id: stage.won, value: 500 });
      expect(deal.status).toBe('won');
      const [won] = await waitForEvent(deal.id, 'deal.won');
      expect(won.data).toMatchObject({ deal_id: deal.id, stage_id: stage.won, value: 500 });
    });

    it('rejects invalid fields, naming each', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ value: -1 }, 'value'],
        [{ value: 10.5 }, 'value'],
        [{ value: Number.MAX_SAFE_INTEGER + 2 }, 'value'],
        [{ value: '100' }, 'value'],
        [{ currency: 'XYZ' }, 'currency'],
        [{ currency: 'US' }, 'currency'],
        [{ status: 'pending' }, 'status'],
        [{ expected_close: 'tomorrow' }, 'expected_close'],
        [{ owner_id: 'bob' }, 'owner_id'],
        [{ source: 'carrier pigeon' }, 'source'],
        [{ name: '' }, 'name'],
        [{ metadata: 'x' }, 'metadata'],
        [{ loss_reason: 'early' }, 'loss_reason'],
        [{ stage_id: other.stages[0].id }, 'stage_id'],
        [{ stage_id: 'stg_00000000000000000000000000' }, 'stage_id'],
        [{ pipeline_id: 'pipe_00000000000000000000000000' }, 'pipeline_id'],
      ];
      for (const [patch, field] of cases) {
        const res = await stack.api.post('/deals', { name: 'Bad', pipeline_id: pipeline.id, stage_id: stage.qualify, ...patch });
        expect({ field, status: res.status, code: res.body.error?.code }).toEqual({ field, status: 400, code: 'validation_failed' });
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      const missing = await stack.api.post('/deals', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'pipeline_id', 'stage_id']);
    });
  });

  describe('contacts and companies', () => {
    it('checks that contact_id and company_id exist and names them in get', async () => {
      const contact = await stack.api.post('/contacts', { email: `buyer-${randomUUID()}@example.com`, first_name: 'Ada', last_name: 'Byron' });
      expect(contact.status).toBe(201);
      const company = await stack.api.post('/companies', { name: 'Analytical Engines' });
      expect(company.status).toBe(201);

      const missingContact = await stack.api.post('/deals', {
        name: 'X',
        pipeline_id: pipeline.id,
        stage_id: stage.qualify,
        contact_id: 'cont_00000000000000000000000000',
        company_id: 'comp_00000000000000000000000000',
      });
      expect(missingContact.status).toBe(400);
      expect(missingContact.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['company_id', 'contact_id']);

      const deal = await createDeal({ contact_id: contact.body.data.id, company_id: company.body.data.id });
      const got = await stack.api.get(`/deals/${deal.id}`);
      expect(got.status).toBe(200);
      expect(got.body.data.relationships).toEqual({
        contact: { type: 'contact', id: contact.body.data.id, name: expect.stringContaining('Ada') },
        company: { type: 'company', id: company.body.data.id, name: 'Analytical Engines' },
        pipeline: { type: 'pipeline', id: pipeline.id, name: 'Sales' },
        stage: { type: 'stage', id: stage.qualify, name: 'Qualify' },
        owner: null,
      });
      expect(got.body.included).toEqual([got.body.data.relationships.contact, got.body.data.relationships.company]);

      const listed = await stack.api.get(`/contacts/${contact.body.data.id}/deals`);
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([deal.id]);
      expect(Object.keys(listed.body.data[0]).sort()).toEqual([
        'association',
        'created_at',
        'currency',
        'id',
        'name',
        'pipeline_id',
        'stage_id',
        'status',
        'updated_at',
        'value',
      ]);
      expect(listed.body.data[0].association).toEqual({ role: null, is_primary: true });

      const badPatch = await stack.api.patch(`/deals/${deal.id}`, { contact_id: 'cont_00000000000000000000000000' });
      expect(badPatch.status).toBe(400);
      expect(badPatch.body.error.details[0].field).toBe('contact_id');
    });

    it('moves the deals of a merged contact to the winner, unlinks a deleted contact or company, once', async () => {
      const newContact = async (name: string) =>
        (await stack.api.post('/contacts', { email: `${name}.${randomUUID()}@example.com`, first_name: name })).body.data.id as string;
      const loser = await newContact('Loser');
      const winner = await newContact('Winner');
      const company = (await stack.api.post('/companies', { name: 'Unlinked Co' })).body.data.id as string;
      const deal = await createDeal({ contact_id: loser, company_id: company });

      // The merge moves the deal at once and then announces contact.deleted {merged_into}, which the deals
      // service consumes too: the second move finds nothing left to move and must change nothing.
      expect((await stack.api.post('/contacts/merge', { winner_id: winner, loser_id: loser })).status).toBe(200);
      expect((await stack.api.delete(`/companies/${company}`)).status).toBe(204);
      await eventually(async () => {
        const got = (await stack.api.get(`/deals/${deal.id}`)).body.data;
        return got.contact_id === winner && got.company_id === null ? got : undefined;
      });
      // The winner is then deleted for good: its deals lose the contact.
      expect((await stack.api.delete(`/contacts/${winner}`)).status).toBe(204);
      await eventually(async () => {
        const got = (await stack.api.get(`/deals/${deal.id}`)).body.data;
        return got.contact_id === null ? got : undefined;
      });

      // A later contact's deletion, cleaned up after the ones above (the deals service consumes contact
      // events in order and publishes in commit order): once its deal's event is here, any second change
      // to the first deal would be too.
      const marker = await newContact('Marker');
      const markerDeal = await createDeal({ contact_id: marker });
      expect((await stack.api.delete(`/contacts/${marker}`)).status).toBe(204);
      await waitForEvent(markerDeal.id, 'deal.updated');
      // Each also carries the deal and its version, for copies kept from an export (docs/exports.md).
      const handoff = { version: expect.any(Number), record: expect.objectContaining({ id: deal.id }) };
      expect(eventsFor(deal.id, 'deal.updated').map((e) => e.data)).toEqual([
        { deal_id: deal.id, changed: ['contact_id'], previous: { contact_id: loser }, current: { contact_id: winner }, ...handoff },
        { deal_id: deal.id, changed: ['company_id'], previous: { company_id: company }, current: { company_id: null }, ...handoff },
        { deal_id: deal.id, changed: ['contact_id'], previous: { contact_id: winner }, current: { contact_id: null }, ...handoff },
      ]);
    });

    it('reassigns deals from one contact to another idempotently', async () => {
      const from = 'cont_01j00000000000000000000002';
      const to = 'cont_01j00000000000000000000003';
      const a = await createDeal();
      const b = await createDeal();
      await stack.services.deals!.dataSource.query(`UPDATE deals SET contact_id = $1 WHERE id IN ($2, $3)`, [from, a.id, b.id]);
      const ask = () => askService(stack, Ops.dealsInternal.reassignContact.name, { from_contact_id: from, to_contact_id: to });
      expect(await ask()).toEqual({ moved: 2 });
      expect(await ask()).toEqual({ moved: 0 });
      expect((await stack.api.get(`/deals?contact_id=${to}`)).body.data.map((d: { id: string }) => d.id)).toEqual([a.id, b.id]);
      await waitForEvent(a.id, 'deal.updated');
      await waitForEvent(b.id, 'deal.updated');

      const resolved = await askService(stack, Ops.dealsInternal.resolve.name, { deal_ids: [a.id, 'deal_00000000000000000000000000'] });
      expect(resolved).toEqual({ deals: [{ type: 'deal', id: a.id, name: 'Acme renewal' }] });
    });
  });

  describe('update', () => {
    it('changes only the fields given and reports them in deal.updated', async () => {
      const deal = await createDeal({ value: 100, source: 'paid', metadata: { a: 1 } });
      const res = await stack.api.patch(`/deals/${deal.id}`, { value: 200, name: 'Renamed', source: null });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: deal.id, value: 200, name: 'Renamed', source: null, metadata: { a: 1 }, currency: 'USD' });
      expect(res.body.data.relationships.stage).toEqual({ type: 'stage', id: stage.qualify, name: 'Qualify' });
      expect(res.body.included).toEqual([]);
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(deal.updated_at));
      const [updated] = await waitForEvent(deal.id, 'deal.updated');
      expect((updated as DomainEvent<'deal.updated'>).data.changed.sort()).toEqual(['name', 'source', 'value']);

      const same = await stack.api.patch(`/deals/${deal.id}`, { value: 200 });
      expect(same.status).toBe(200);
      expect(same.body.data.updated_at).toBe(res.body.data.updated_at);

      expect((await stack.api.patch(`/deals/${deal.id}`, { name: null })).status).toBe(400);
      expect((await stack.api.patch(`/deals/${deal.id}`, { value: -5 })).status).toBe(400);
      expect((await stack.api.patch(`/deals/${deal.id}`, { stage_id: other.stages[1].id })).status).toBe(400);
      expect((await stack.api.patch('/deals/deal_00000000000000000000000000', { name: 'x' })).status).toBe(404);
    });

    it('marks a deal lost with a reason and emits deal.lost once', async () => {
      const deal = await createDeal();
      const res = await stack.api.patch(`/deals/${deal.id}`, { status: 'lost', loss_reason: 'budget' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'lost', loss_reason: 'budget' });
      const [lost] = await waitForEvent(deal.id, 'deal.lost');
      expect(lost.data).toMatchObject({ deal_id: deal.id, loss_reason: 'budget' });
      await stack.api.patch(`/deals/${deal.id}`, { status: 'lost' });
      await stack.api.patch(`/deals/${deal.id}`, { name: 'still lost' });
      await waitForEvent(deal.id, 'deal.updated', 2);
      expect(eventsFor(deal.id, 'deal.lost')).toHaveLength(1);
    });

    it('moves across pipelines through PATCH with pipeline_id and stage_id together', async () => {
      const deal = await createDeal();
      const alone = await stack.api.patch(`/deals/${deal.id}`, { pipeline_id: other.id });
      expect(alone.status).toBe(400);
      expect(alone.body.error.details[0].field).toBe('stage_id');
      const res = await stack.api.patch(`/deals/${deal.id}`, { pipeline_id: other.id, stage_id: other.stages[2].id });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ pipeline_id: other.id, stage_id: other.stages[2].id });
      const history = (await stack.api.get(`/deals/${deal.id}/history`)).body.data;
      expect(history.map((h: { to_stage_id: string }) => h.to_stage_id)).toEqual([stage.qualify, other.stages[2].id]);
      const [changed] = await waitForEvent(deal.id, 'deal.stage_changed');
      expect(changed.data).toEqual({ deal_id: deal.id, from_stage_id: stage.qualify, to_stage_id: other.stages[2].id });
    });
  });

  describe('stage moves', () => {
    it('moves a deal, records history, resets stage_entered_at and emits deal.stage_changed', async () => {
      const deal = await createDeal();
      const res = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.propose });
      expect(res.status).toBe(200);
      const moved = res.body.data;
      expect(moved).toMatchObject({ id: deal.id, stage_id: stage.propose, status: 'open', days_in_stage: 0 });
      expect(moved.relationships.stage).toEqual({ type: 'stage', id: stage.propose, name: 'Propose' });
      expect(res.body.included).toEqual([]);
      expect(Date.parse(moved.stage_entered_at)).toBeGreaterThan(Date.parse(deal.stage_entered_at));

      const [changed] = await waitForEvent(deal.id, 'deal.stage_changed');
      expect(changed.data).toEqual({ deal_id: deal.id, from_stage_id: stage.qualify, to_stage_id: stage.propose });
      const history = (await stack.api.get(`/deals/${deal.id}/history`)).body.data;
      expect(history).toHaveLength(2);
      expect(history[1]).toMatchObject({
        from_stage_id: stage.qualify,
        to_stage_id: stage.propose,
        changed_at: moved.stage_entered_at,
        changed_by: SERVICE_USER,
      });
    });

    it('wins and loses through won and lost stages, and reopens through an open stage', async () => {
      const deal = await createDeal({ value: 9900, currency: 'GBP' });
      const won = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.won });
      expect(won.body.data.status).toBe('won');
      const [wonEvent] = await waitForEvent(deal.id, 'deal.won');
      expect(wonEvent.data).toEqual({ deal_id: deal.id, pipeline_id: pipeline.id, stage_id: stage.won, value: 9900, currency: 'GBP' });

      const lost = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.lost });
      expect(lost.body.data.status).toBe('lost');
      await waitForEvent(deal.id, 'deal.lost');

      const reopened = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.negotiate });
      expect(reopened.body.data).toMatchObject({ status: 'open', loss_reason: null });
      await waitForEvent(deal.id, 'deal.stage_changed', 3);
      expect(eventsFor(deal.id, 'deal.won')).toHaveLength(1);
      expect(eventsFor(deal.id, 'deal.lost')).toHaveLength(1);
    });

    it('keeps a stalled deal stalled when it moves between open stages', async () => {
      const deal = await createDeal({ status: 'stalled' });
      const moved = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.propose });
      expect(moved.body.data.status).toBe('stalled');
    });

    it('rejects a stage of another pipeline or one that does not exist, and treats the current stage as a no-op', async () => {
      const deal = await createDeal();
      const foreign = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: other.stages[1].id });
      expect(foreign.status).toBe(400);
      expect(foreign.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'stage_id' }] });
      expect((await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: 'stg_00000000000000000000000000' })).status).toBe(400);
      expect((await stack.api.post(`/deals/${deal.id}/stage`, {})).status).toBe(400);
      expect((await stack.api.post('/deals/deal_00000000000000000000000000/stage', { stage_id: stage.propose })).status).toBe(404);

      const same = await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: stage.qualify });
      expect(same.status).toBe(200);
      expect(same.body.data.stage_entered_at).toBe(deal.stage_entered_at);
      expect((await stack.api.get(`/deals/${deal.id}/history`)).body.data).toHaveLength(1);
    });

    it('keeps history consistent with the final stage under concurrent moves', async () => {
      const deal = await createDeal();
      const targets = [stage.propose, stage.negotiate, stage.qualify, stage.won, stage.propose, stage.negotiate, stage.lost, stage.qualify];
      const results = await Promise.all(targets.map((id) => stack.api.post(`/deals/${deal.id}/stage`, { stage_id: id })));
      expect(results.map((r) => r.status)).toEqual(targets.map(() => 200));

      const final = (await stack.api.get(`/deals/${deal.id}`)).body.data;
      const history = await stack.api.listAll(`/deals/${deal.id}/history`);
      expect(history[0].from_stage_id).toBeNull();
      for (let i = 1; i < history.length; i++) {
        expect(history[i].from_stage_id).toBe(history[i - 1].to_stage_id);
        expect(history[i].from_stage_id).not.toBe(history[i].to_stage_id);
        expect(Date.parse(history[i].changed_at)).toBeGreaterThanOrEqual(Date.parse(history[i - 1].changed_at));
      }
      expect(history[history.length - 1].to_stage_id).toBe(final.stage_id);
      expect(final.stage_entered_at).toBe(history[history.length - 1].changed_at);
      const statusOf: Record<string, string> = { [stage.won]: 'won', [stage.lost]: 'lost' };
      expect(final.status).toBe(statusOf[final.stage_id] ?? 'open');
    });

    it('pages history in chronological order', async () => {
      const deal = await createDeal();
      const path = [stage.propose, stage.negotiate, stage.propose, stage.won];
      for (const id of path) expect((await stack.api.post(`/deals/${deal.id}/stage`, { stage_id: id })).status).toBe(200);
      const first = await stack.api.get(`/deals/${deal.id}/history?limit=2`);
      expect(first.body.has_more).toBe(true);
      const rest = await stack.api.get(`/deals/${deal.id}/history?limit=10&cursor=${first.body.next_cursor}`);
      expect(rest.body.has_more).toBe(false);
      expect(rest.body.next_cursor).toBeUndefined();
      const all = [...first.body.data, ...rest.body.data];
      expect(all.map((h: { to_stage_id: string }) => h.to_stage_id)).toEqual([stage.qualify, ...path]);
      expect((await stack.api.get(`/deals/deal_00000000000000000000000000/history`)).status).toBe(404);
      const otherDeal = await createDeal();
      expect((await stack.api.get(`/deals/${otherDeal.id}/history?cursor=${first.body.next_cursor}`)).status).toBe(400);
    });
  });

  describe('activity', () => {
    it('keeps the latest activity time from activity events, even out of order, and filters on inactivity', async () => {
      const ownerId = await newUser();
      const deal = await createDeal({ name: 'Quiet', owner_id: ownerId });
      const fresh = await createDeal({ name: 'Busy', owner_id: ownerId });
      const tenDaysAgo = new Date(Date.now() - 10 * DAY_MS).toISOString();
      const twentyDaysAgo = new Date(Date.now() - 20 * DAY_MS).toISOString();
      await publish('activity.created', { activity_id: 'act_1', type: 'email', contact_id: null, deal_id: deal.id, occurred_at: tenDaysAgo });
      await publish('activity.updated', {
        activity_id: 'act_2',
        type: 'call',
        contact_id: null,
        deal_id: deal.id,
        occurred_at: twentyDaysAgo,
        changed: ['occurred_at'],
      });
      await publish('activity.created', { activity_id: 'act_3', type: 'email', contact_id: null, deal_id: fresh.id, occurred_at: new Date().toISOString() });
      await eventually(async () => ((await stack.api.get(`/deals/${fresh.id}`)).body.data.last_activity_at ? true : undefined));
      const got = (await stack.api.get(`/deals/${deal.id}`)).body.data;
      expect(got.last_activity_at).toBe(tenDaysAgo);

      const owner = `owner_id=${ownerId}`;
      const inactive = async (n: number) => (await stack.api.get(`/deals?${owner}&days_since_activity_gt=${n}`)).body.data.map((d: { id: string }) => d.id);
      expect(await inactive(5)).toEqual([deal.id]);
      expect(await inactive(9)).toEqual([deal.id]);
      expect(await inactive(10)).toEqual([]);
      expect(await inactive(0)).toEqual([deal.id]);
      expect((await stack.api.get('/deals?days_since_activity_gt=-1')).status).toBe(400);
    });

    it('takes activity logged through the contacts service', async () => {
      const deal = await createDeal();
      const when = new Date(Date.now() - 3 * DAY_MS).toISOString();
      const activity = await stack.api.post('/activities', { type: 'meeting', subject: 'Kick-off', deal_id: deal.id, occurred_at: when });
      expect(activity.status).toBe(201);
      const got = await eventually(async () => {
        const d = (await stack.api.get(`/deals/${deal.id}`)).body.data;
        return d.last_activity_at ? d : undefined;
      });
      expect(got.last_activity_at).toBe(when);
    });
  });

  describe('lists', () => {
    it('filters by status, pipeline, stage, owner, value range and creation time', async () => {
      const owner = await newUser();
      const before = new Date().toISOString();
      const small = await createDeal({ owner_id: owner, value: 100 });
      const mid = await createDeal({ owner_id: owner, value: 5_000, stage_id: stage.propose });
      const big = await createDeal({ owner_id: owner, value: 90_000, stage_id: stage.won });
      const elsewhere = await createDeal({ owner_id: owner, value: 5_000, pipeline_id: other.id, stage_id: other.stages[0].id });
      const ids = async (query: string) => (await stack.api.get(`/deals?owner_id=${owner}&${query}`)).body.data.map((d: { id: string }) => d.id);

      expect(await ids('')).toEqual([small.id, mid.id, big.id, elsewhere.id]);
      expect(await ids('status=won')).toEqual([big.id]);
      expect(await ids('status=open')).toEqual([small.id, mid.id, elsewhere.id]);
      expect(await ids(`pipeline_id=${other.id}`)).toEqual([elsewhere.id]);
      expect(await ids(`stage_id=${stage.propose}`)).toEqual([mid.id]);
      expect(await ids('min_value=5000')).toEqual([mid.id, big.id, elsewhere.id]);
      expect(await ids('max_value=5000')).toEqual([small.id, mid.id, elsewhere.id]);
      expect(await ids('min_value=1000&max_value=10000&status=open')).toEqual([mid.id, elsewhere.id]);
      expect(await ids(`created_after=${encodeURIComponent(before)}`)).toEqual([small.id, mid.id, big.id, elsewhere.id]);
      expect(await ids(`created_before=${encodeURIComponent(before)}`)).toEqual([]);
      expect(await ids(`created_before=${encodeURIComponent(mid.created_at)}`)).toEqual([small.id]);

      const pipelineDeals = await stack.api.get(`/pipelines/${pipeline.id}/deals?status=open&stage_id=${stage.propose}`);
      expect(pipelineDeals.status).toBe(200);
      expect(pipelineDeals.body.data.map((d: { id: string }) => d.id)).toContain(mid.id);
      expect(pipelineDeals.body.data.every((d: { stage_id: string; status: string }) => d.stage_id === stage.propose && d.status === 'open')).toBe(true);
      const otherDeals = await stack.api.listAll(`/pipelines/${other.id}/deals`);
      expect(otherDeals.every((d) => d.pipeline_id === other.id)).toBe(true);
      expect(otherDeals.map((d) => d.id)).toContain(elsewhere.id);

      for (const bad of ['status=closed', 'min_value=abc', 'max_value=1.5', 'created_after=yesterday', 'limit=500', 'unknown=1']) {
        expect({ bad, status: (await stack.api.get(`/deals?${bad}`)).status }).toEqual({ bad, status: 400 });
      }
      expect((await stack.api.get(`/pipelines/${pipeline.id}/deals?status=nope`)).status).toBe(400);
    });

    it('pages with a keyset cursor that stays stable while deals are added and removed', async () => {
      const owner = await newUser();
      const made: Array<{ id: string }> = [];
      for (let i = 0; i < 7; i++) made.push(await createDeal({ owner_id: owner, name: `P${i}` }));
      const seen: string[] = [];
      let page = await stack.api.get(`/deals?owner_id=${owner}&limit=3`);
      expect(page.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
      seen.push(...page.body.data.map((d: { id: string }) => d.id));
      // Between pages: delete one already seen and one not yet seen, add a new one.
      expect((await stack.api.delete(`/deals/${made[0].id}`)).status).toBe(204);
      expect((await stack.api.delete(`/deals/${made[4].id}`)).status).toBe(204);
      const added = await createDeal({ owner_id: owner, name: 'late' });
      while (page.body.has_more) {
        page = await stack.api.get(`/deals?owner_id=${owner}&limit=3&cursor=${page.body.next_cursor}`);
        seen.push(...page.body.data.map((d: { id: string }) => d.id));
      }
      expect(page.body.next_cursor).toBeUndefined();
      expect(seen).toEqual([...made.slice(0, 4), ...made.slice(5), added].map((d) => d.id).filter((id) => id !== made[4].id));
      expect(new Set(seen).size).toBe(seen.length);
    });
  });

  describe('delete', () => {
    it('deletes a deal and its history, emits deal.deleted, and answers 404 afterwards', async () => {
      const deal = await createDeal();
      const res = await stack.api.delete(`/deals/${deal.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await stack.api.get(`/deals/${deal.id}`)).status).toBe(404);
      expect((await stack.api.get(`/deals/${deal.id}/history`)).status).toBe(404);
      expect((await stack.api.delete(`/deals/${deal.id}`)).status).toBe(404);
      const [deleted] = await waitForEvent(deal.id, 'deal.deleted');
      expect(deleted.data).toEqual({ deal_id: deal.id });
      expect((await stack.api.get('/deals/nonsense')).status).toBe(404);
    });
  });
});
