import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(5).toString('hex');

describe('Batch writes', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // A full batch of large contacts is checked for what it answers, not for how fast: a loaded machine took over the default 5 s.
    stack = await startStack({ services: ['contacts', 'deals', 'events'], env: { RPC_TIMEOUT_MS: '60000' } });
  });
  afterAll(() => stack.stop());

  /** Events of these types about these records (`data[idField]`), in log order, once at least `expected` are there. */
  async function eventsOf(types: string[], idField: string, ids: Set<string>, expected: number) {
    return eventually(async () => {
      const events = (await stack.api.listAll(`/events?type=${types.join(',')}`)).filter((e) => ids.has(e.data[idField]));
      return events.length >= expected ? events : undefined;
    }, 120_000);
  }

  /** A record created now through the service that made the writes under test, and the event that logs it. */
  type Marker = () => Promise<{ type: string; idField: string; id: string }>;
  const contactMarker: Marker = async () => ({
    type: 'contact.created',
    idField: 'contact_id',
    id: (await stack.api.post('/contacts', { email: `marker-${tag()}@batch.example` })).body.data.id,
  });

  /**
   * Every event of these types about these records, once the log has caught up with the writes made so far:
   * the marker is logged after them (each service publishes in commit order), so an extra event those writes
   * caused would be in the log by the time the marker's is. The marker goes through the writes' own service.
   */
  async function allEventsOf(types: string[], idField: string, ids: Set<string>, marker = contactMarker) {
    const written = await marker();
    await eventsOf([written.type], written.idField, new Set([written.id]), 1);
    return eventsOf(types, idField, ids, 0);
  }

  it('creates contacts, answering each item as POST /contacts would, with one event per item in item order', async () => {
    const t = tag();
    const items = [0, 1, 2].map((i) => ({ email: `b${i}-${t}@batch.example`, first_name: `B${i}` }));
    const res = await stack.api.post('/contacts/batch', { operation: 'create', items });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([
      [0, 201],
      [1, 201],
      [2, 201],
    ]);
    const single = (await stack.api.post('/contacts', { email: `single-${t}@batch.example` })).body.data;
    expect(Object.keys(res.body.data[0].data).sort()).toEqual(Object.keys(single).sort());
    const ids = res.body.data.map((r: { data: { id: string } }) => r.data.id);
    const events = await allEventsOf(['contact.created'], 'contact_id', new Set(ids));
    // Each also carries the record as a query shows it and its version, for copies kept from an export (docs/exports.md).
    expect(events.map((e) => e.data)).toEqual(
      ids.map((id: string, i: number) => ({ contact_id: id, email: items[i].email, version: expect.any(Number), record: res.body.data[i].data })),
    );
  });

  const statuses = (res: { status: number; text: string; body: { data: Array<{ index: number; status: number }> } }) => {
    if (res.status !== 200) throw new Error(`expected a batch answer, got ${res.status}: ${res.text}`);
    return res.body.data.map((r) => r.status);
  };

  it('answers every item as its single write would: a bad item fails alone, in input order', async () => {
    const t = tag();
    const taken = (await stack.api.post('/contacts', { email: `taken-${t}@batch.example` })).body.data;
    const res = await stack.api.post('/contacts/batch', {
      operation: 'create',
      items: [
        { email: `ok-${t}@batch.example` },
        { email: 'not-an-email', shoe_size: 9 },
        { email: `TAKEN-${t}@batch.example` },
        { email: `ok2-${t}@batch.example`, company_id: 'comp_00000000000000000000000000' },
        { email: `ok3-${t}@batch.example`, stage: 'lead' },
        { email: `ok3-${t}@batch.example` },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { index: number }) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(statuses(res)).toEqual([201, 400, 409, 400, 201, 409]);
    const single = await stack.api.post('/contacts', { email: 'not-an-email', shoe_size: 9 });
    expect(res.body.data[1].error).toEqual(single.body.error);
    expect(res.body.data[2].error).toMatchObject({ code: 'conflict', details: [{ field: 'email', code: 'duplicate' }] });
    expect(res.body.data[2].error.message).toContain(taken.id);
    expect(res.body.data[3].error).toMatchObject({ code: 'validation_failed', details: [{ field: 'company_id', code: 'not_found' }] });
    expect(res.body.data[1].data).toBeUndefined();
    expect((await stack.api.get(`/contacts/${res.body.data[4].data.id}`)).body.data.stage).toBe('lead');
  });

  it('updates with PATCH rules and deletes, with 404 for unknown ids and no event for an unchanged item', async () => {
    const t = tag();
    const made = await stack.api.post('/contacts/batch', {
      operation: 'create',
      items: [0, 1, 2].map((i) => ({ email: `u${i}-${t}@batch.example`, first_name: 'Old', title: 'CTO' })),
    });
    const [a, b, c] = made.body.data.map((r: { data: { id: string } }) => r.data.id);
    const company = (await stack.api.post('/companies', { name: `Acme ${t}` })).body.data;
    const updated = await stack.api.post('/contacts/batch', {
      operation: 'update',
      items: [
        { id: a, first_name: 'New', title: null, company_id: company.id },
        { id: b, first_name: 'Old' },
        { id: 'cont_00000000000000000000000000', first_name: 'X' },
        { id: c, email: `u0-${t}@batch.example` },
        { first_name: 'no id' },
      ],
    });
    expect(updated.status).toBe(200);
    expect(statuses(updated)).toEqual([200, 200, 404, 409, 400]);
    expect(updated.body.data[0].data).toMatchObject({
      id: a,
      first_name: 'New',
      title: null,
      company_id: company.id,
      relationships: { company: { id: company.id, name: `Acme ${t}` } },
    });
    expect(updated.body.data[0].data).toEqual((await stack.api.get(`/contacts/${a}`)).body.data);
    expect(updated.body.data[2].error.code).toBe('not_found');
    expect(updated.body.data[4].error.details[0]).toMatchObject({ field: 'id', code: 'required' });

    const events = await allEventsOf(['contact.updated'], 'contact_id', new Set([a, b, c]));
    expect(events.map((e) => e.data)).toEqual([
      {
        contact_id: a,
        changed: ['first_name', 'title', 'company_id'],
        previous: { first_name: 'Old', title: 'CTO', company_id: null },
        current: { first_name: 'New', title: null, company_id: company.id },
        version: expect.any(Number),
        record: expect.objectContaining({ id: a, first_name: 'New' }),
      },
    ]);

    const removed = await stack.api.post('/contacts/batch', {
      operation: 'delete',
      items: [{ id: a }, { id: 'cont_00000000000000000000000000' }, { id: b, email: 'x' }],
    });
    expect(statuses(removed)).toEqual([204, 404, 400]);
    expect(removed.body.data[0]).toEqual({ index: 0, status: 204 });
    expect((await stack.api.get(`/contacts/${a}`)).status).toBe(404);
    expect((await stack.api.get(`/contacts/${b}`)).status).toBe(200);
    expect((await allEventsOf(['contact.deleted'], 'contact_id', new Set([a, b]))).map((e) => e.data)).toEqual([{ contact_id: a }]);
  });

  it('upserts contacts on email, whatever its case: matched items change only the fields they give, the rest are created', async () => {
    const t = tag();
    const existing = (await stack.api.post('/contacts', { email: `up-${t}@batch.example`, first_name: 'Ada', title: 'CEO' })).body.data;
    const res = await stack.api.post('/contacts/batch', {
      operation: 'upsert',
      items: [
        { email: `UP-${t}@batch.example`, last_name: 'Lovelace' },
        { email: `new-${t}@batch.example`, first_name: 'Grace' },
      ],
    });
    expect(res.status).toBe(200);
    expect(statuses(res)).toEqual([200, 201]);
    expect(res.body.data[0].data).toMatchObject({ id: existing.id, first_name: 'Ada', last_name: 'Lovelace', title: 'CEO' });
    expect(res.body.data[1].data).toMatchObject({ first_name: 'Grace' });
    const again = await stack.api.post('/contacts/batch', { operation: 'upsert', items: [{ email: `new-${t}@batch.example`, first_name: 'Grace' }] });
    expect(statuses(again)).toEqual([200]);
    const ids = new Set([existing.id, res.body.data[1].data.id]);
    const events = await allEventsOf(['contact.created', 'contact.updated'], 'contact_id', ids);
    expect(events.map((e) => [e.type, e.data.contact_id])).toEqual([
      ['contact.created', existing.id],
      ['contact.updated', existing.id],
      ['contact.created', res.body.data[1].data.id],
    ]);
  });

  it('with all_or_none writes every item in one transaction, or nothing and no event, naming every failing item', async () => {
    const t = tag();
    const failed = await stack.api.post('/contacts/batch', {
      operation: 'create',
      all_or_none: true,
      items: [{ email: `aon0-${t}@batch.example` }, { email: 'bad' }, { email: `aon2-${t}@batch.example`, owner_id: 'user_00000000000000000000000001' }],
    });
    expect(failed.status).toBe(400);
    expect(failed.body.error.details.map((d: { field: string }) => d.field)).toEqual(['items.1.email', 'items.2.owner_id']);
    expect((await stack.api.post('/contacts/query', { filter: { email: { $in: [`aon0-${t}@batch.example`] } } })).body.data).toEqual([]);

    // A conflict found only by the write (the unique index) also rolls back the items before it.
    await stack.api.post('/contacts', { email: `aon-taken-${t}@batch.example` });
    const conflict = await stack.api.post('/contacts/batch', {
      operation: 'create',
      all_or_none: true,
      items: [{ email: `aon3-${t}@batch.example` }, { email: `aon-taken-${t}@batch.example` }],
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.details).toEqual([expect.objectContaining({ field: 'items.1.email', code: 'duplicate' })]);
    expect((await stack.api.post('/contacts/query', { filter: { email: { $in: [`aon3-${t}@batch.example`] } } })).body.data).toEqual([]);

    const ok = await stack.api.post('/contacts/batch', {
      operation: 'create',
      all_or_none: true,
      items: [{ email: `aon4-${t}@batch.example` }, { email: `aon5-${t}@batch.example` }],
    });
    expect(statuses(ok)).toEqual([201, 201]);
    // Only the applied batch's events exist: a marker written after it proves the log has caught up.
    const marker = (await stack.api.post('/contacts', { email: `marker-${t}@batch.example` })).body.data;
    const emails = (
      await eventually(async () => {
        const events = await stack.api.listAll('/events?type=contact.created');
        return events.some((e) => e.data.contact_id === marker.id) ? events : undefined;
      })
    )
      .map((e) => e.data.email)
      .filter((e: string) => e.includes(t));
    expect(emails.sort()).toEqual([`aon-taken-${t}@batch.example`, `aon4-${t}@batch.example`, `aon5-${t}@batch.example`, `marker-${t}@batch.example`]);
  });

  it('refuses a malformed batch as a whole, naming the path', async () => {
    const contact = (await stack.api.post('/contacts', { email: `m-${tag()}@batch.example` })).body.data;
    const cases: Array<[unknown, string]> = [
      [{ operation: 'create', items: [] }, 'items'],
      [{ operation: 'create', items: Array.from({ length: 201 }, (_, i) => ({ email: `x${i}@batch.example` })) }, 'items'],
      [{ operation: 'merge', items: [{}] }, 'operation'],
      [{ items: [{}] }, 'operation'],
      [{ operation: 'create', items: [1, 'x'] }, 'items'],
      [{ operation: 'create', items: [{}], all_or_none: 'yes' }, 'all_or_none'],
      [{ operation: 'create', items: [{ email: 'a@batch.example' }], key: 'email' }, 'key'],
      [{ operation: 'create', items: [{}], extra: 1 }, 'extra'],
      [{ operation: 'delete', items: [{ id: contact.id }, { id: contact.id }] }, 'items.1'],
      [{ operation: 'upsert', items: [{ email: 'Same@batch.example' }, { email: 'same@batch.example' }] }, 'items.1'],
      [{ operation: 'upsert', key: 'phone', items: [{ email: 'k@batch.example' }] }, 'key'],
    ];
    for (const [body, field] of cases) {
      const res = await stack.api.post('/contacts/batch', body);
      expect([res.status, res.body.error.details?.[0]?.field]).toEqual([400, field]);
    }
    const upsertDeals = await stack.api.post('/deals/batch', { operation: 'upsert', items: [{ name: 'x' }] });
    expect([upsertDeals.status, upsertDeals.body.error.details[0].field]).toEqual([400, 'operation']);
    expect((await stack.api.post('/contacts/batch', undefined, { rawBody: '{"operation": "create", "items": [' })).status).toBe(400);
    expect((await stack.api.post('/contacts/batch', [])).status).toBe(400);
  });

  it('replays a batch sent again with the same Idempotency-Key and writes nothing again', async () => {
    const t = tag();
    const body = { operation: 'create', items: [{ email: `idem-${t}@batch.example` }] };
    const headers = { 'Idempotency-Key': `batch-${t}` };
    const first = await stack.api.post('/contacts/batch', body, { headers });
    const second = await stack.api.post('/contacts/batch', body, { headers });
    expect(statuses(first)).toEqual([201]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await stack.api.post('/contacts/query', { filter: { email: { $eq: `idem-${t}@batch.example` } } })).body.data).toHaveLength(1);
  });

  it('costs one rate-limit token per item, shown in the rate-limit headers', async () => {
    const t = tag();
    const before = Number((await stack.api.get('/contacts?limit=1')).headers.get('x-ratelimit-remaining'));
    const res = await stack.api.post('/contacts/batch', {
      operation: 'create',
      items: Array.from({ length: 50 }, (_, i) => ({ email: `rl${i}-${t}@batch.example` })),
    });
    expect(res.status).toBe(200);
    const after = Number(res.headers.get('x-ratelimit-remaining'));
    // 50 tokens for the batch; the bucket refills meanwhile at most a few tokens at the test's rate.
    expect(before - after).toBeGreaterThanOrEqual(45);
    expect(before - after).toBeLessThanOrEqual(50);
  });

  it('takes batch bodies over the 1 MiB limit of other routes, up to its own limit', async () => {
    const big = 'x'.repeat(600_000);
    const single = await stack.api.post('/contacts', { email: 'big@batch.example', metadata: { a: big, b: big } });
    expect([single.status, single.body.error.code]).toEqual([413, 'payload_too_large']);
    // 200 full records, about 1.2 MB of JSON: over the 1 MiB of other routes and over the broker's default payload limit.
    const t = tag();
    const notes = (i: number) =>
      Object.fromEntries(
        Array.from({ length: 50 }, (_, k) => [
          `note_${k}`,
          `Met at event ${i}-${k}; follow up about the renewal, pricing tier and onboarding plan, with the analytics team copied.`,
        ]),
      );
    const items = Array.from({ length: 200 }, (_, i) => ({
      email: `full${i}-${t}@batch.example`,
      first_name: 'Augusta Ada',
      last_name: 'King, Countess of Lovelace',
      phone: '+44 20 7946 0000',
      title: 'Head of Analytical Engines',
      stage: 'prospect',
      source: 'event',
      source_detail: 'Difference Engine Users Conference, London, table 12',
      icp_score: 87,
      icp_score_reason: 'Large analytical workload, budget confirmed, champion identified in engineering.',
      metadata: notes(i),
    }));
    expect(Buffer.byteLength(JSON.stringify({ operation: 'create', items }))).toBeGreaterThan(1024 * 1024);
    const full = await stack.api.post('/contacts/batch', { operation: 'create', items });
    expect(statuses(full)).toEqual(items.map(() => 201));
    const tooBig = await stack.api.post('/contacts/batch', {
      operation: 'create',
      items: Array.from({ length: 15 }, () => ({ email: 'big@batch.example', metadata: { a: big } })),
    });
    expect([tooBig.status, tooBig.body.error.message]).toEqual([413, 'Request body exceeds the 8388608 byte limit.']);
  });

  it('writes companies (upserted on domain), activities, tasks, deals and custom object records', async () => {
    const t = tag();
    const companies = await stack.api.post('/companies/batch', {
      operation: 'upsert',
      items: [
        { name: 'One', domain: `one-${t}.example.com` },
        { name: 'Two', domain: `two-${t}.example.com` },
      ],
    });
    expect(statuses(companies)).toEqual([201, 201]);
    const renamed = await stack.api.post('/companies/batch', { operation: 'upsert', items: [{ name: 'One Inc', domain: `ONE-${t}.example.com` }] });
    expect(renamed.body.data[0].data).toMatchObject({ id: companies.body.data[0].data.id, name: 'One Inc' });

    const contact = (await stack.api.post('/contacts', { email: `w-${t}@batch.example` })).body.data;
    const pipeline = (
      await stack.api.post('/pipelines', {
        name: `P ${t}`,
        stages: [
          { name: 'New', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    const [open, won] = pipeline.stages;
    const deals = await stack.api.post('/deals/batch', {
      operation: 'create',
      items: [
        { name: 'D1', pipeline_id: pipeline.id, stage_id: open.id, contact_id: contact.id, value: 100 },
        { name: 'D2', pipeline_id: pipeline.id, stage_id: won.id },
        { name: 'D3', pipeline_id: pipeline.id, stage_id: 'stage_00000000000000000000000000' },
        { name: 'D4', pipeline_id: pipeline.id, stage_id: open.id, contact_id: 'cont_00000000000000000000000000' },
      ],
    });
    expect(statuses(deals)).toEqual([201, 201, 400, 400]);
    expect(deals.body.data[1].data).toMatchObject({ status: 'won' });
    const [d1, d2] = deals.body.data.map((r: { data?: { id: string } }) => r.data?.id);
    const moved = await stack.api.post('/deals/batch', { operation: 'update', items: [{ id: d1, stage_id: won.id, value: 250 }] });
    expect(moved.body.data[0].data).toMatchObject({
      id: d1,
      stage_id: won.id,
      status: 'won',
      value: 250,
      relationships: { stage: { name: 'Won' }, contact: { id: contact.id } },
    });
    expect(moved.body.data[0].data).toEqual({ ...(await stack.api.get(`/deals/${d1}`)).body.data, days_in_stage: 0 });
    const dealMarker: Marker = async () => ({
      type: 'deal.created',
      idField: 'deal_id',
      id: (await stack.api.post('/deals', { name: `Marker ${t}`, pipeline_id: pipeline.id, stage_id: open.id })).body.data.id,
    });
    const dealEvents = await allEventsOf(['deal.created', 'deal.won', 'deal.stage_changed', 'deal.updated'], 'deal_id', new Set([d1, d2]), dealMarker);
    expect(dealEvents.map((e) => `${e.type}:${e.data.deal_id === d1 ? 'd1' : 'd2'}`)).toEqual([
      'deal.created:d1',
      'deal.created:d2',
      'deal.won:d2',
      'deal.stage_changed:d1',
      'deal.won:d1',
      'deal.updated:d1',
    ]);
    expect((await stack.api.get(`/deals/${d1}/history`)).body.data.map((h: { to_stage_id: string }) => h.to_stage_id)).toEqual([open.id, won.id]);

    const activities = await stack.api.post('/activities/batch', {
      operation: 'create',
      items: [
        { type: 'call', contact_id: contact.id, deal_id: d1 },
        { type: 'note', deal_id: 'deal_00000000000000000000000000' },
      ],
    });
    expect(statuses(activities)).toEqual([201, 400]);
    expect(activities.body.data[1].error.details[0]).toMatchObject({ field: 'deal_id', code: 'not_found' });
    const tasks = await stack.api.post('/tasks/batch', { operation: 'create', items: [{ title: 'Call back', status: 'completed', contact_id: contact.id }] });
    expect(tasks.body.data[0].data).toMatchObject({ status: 'completed', completed_at: expect.any(String) });
    const reopened = await stack.api.post('/tasks/batch', { operation: 'update', items: [{ id: tasks.body.data[0].data.id, status: 'pending' }] });
    expect(reopened.body.data[0].data).toMatchObject({ status: 'pending', completed_at: null });

    const s = `proj_${t}`;
    await stack.api.post('/objects', {
      name: 'Project',
      slug: s,
      enforcement_level: 'hard',
      fields: [
        { name: 'code', type: 'string', unique: true },
        { name: 'title', type: 'string' },
      ],
    });
    const records = await stack.api.post(`/objects/${s}/records/batch`, {
      operation: 'upsert',
      key: 'code',
      items: [{ values: { code: 'A', title: 'Alpha' } }, { values: { code: 'B', title: 'Beta' } }],
    });
    expect(statuses(records)).toEqual([201, 201]);
    const again = await stack.api.post(`/objects/${s}/records/batch`, {
      operation: 'upsert',
      key: 'code',
      items: [{ values: { code: 'A', title: 'Alpha 2' } }, { values: { code: 'C' } }],
    });
    expect(statuses(again)).toEqual([200, 201]);
    expect(again.body.data[0].data).toMatchObject({ id: records.body.data[0].data.id, values: { code: 'A', title: 'Alpha 2' } });
    const dup = await stack.api.post(`/objects/${s}/records/batch`, {
      operation: 'create',
      items: [{ values: { code: 'D' } }, { values: { code: 'D' } }, { values: { code: 'A' } }],
    });
    expect(statuses(dup)).toEqual([201, 400, 400]);
    expect((await stack.api.post(`/objects/${s}/records/batch`, { operation: 'upsert', items: [{ values: { code: 'E' } }] })).body.error.details[0].field).toBe(
      'key',
    );
    expect((await stack.api.post(`/objects/nope_${t}/records/batch`, { operation: 'create', items: [{ values: {} }] })).status).toBe(404);
  });

  it('answers an unknown custom object record as its single delete does, with the object named by id', async () => {
    const s = `mission_${Date.now().toString(36)}`;
    const type = await stack.api.post('/objects', { name: 'Mission', slug: s, fields: [{ name: 'title', type: 'string' }] });
    const byId = `/objects/${type.body.data.id}/records`;
    const missing = 'orec_01aaaaaaaaaaaaaaaaaaaaaaaa';
    const single = await stack.api.delete(`${byId}/${missing}`);
    expect(single.status).toBe(404);
    const batch = await stack.api.post(`${byId}/batch`, { operation: 'delete', items: [{ id: missing }] });
    expect(batch.body.data[0]).toEqual({ index: 0, status: 404, error: single.body.error });
    expect(single.body.error.message).toContain(`${s} record`);
  });
});
