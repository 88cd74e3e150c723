import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { randomBytes } from 'crypto';
import { Client as PgClient } from 'pg';
import { ChangeRetentionJob } from '@crm/records';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');

/**
 * The change history across the API (docs/changes.md): entries as contacts are created, changed, merged
 * and deleted, who and what channel made them, GET /changes and its filters, and paging across the two
 * services that keep records. Other objects' entries are covered beside them (changes-*.spec.ts).
 */
describe('change history', () => {
  let stack: TestStack;
  let keyId: string;

  beforeAll(async () => {
    stack = await startStack();
    keyId = (await stack.api.get('/apikeys')).body.data[0].id;
  });
  afterAll(() => stack?.stop());

  const newContact = async (extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const res = await stack.api.post('/contacts', { email: `ch.${tag()}@example.com`, ...extra }, { headers });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; email: string };
  };

  it('records creation and real updates with actor, channel and request id; a no-op PATCH records nothing', async () => {
    expect((await stack.api.post('/objects/contacts/fields', { name: 'tier', type: 'string' })).status).toBeLessThan(300);
    const contact = await newContact({ first_name: 'Ada', custom_fields: { tier: 'gold' } }, { 'X-Request-Id': 'req-create-1' });
    expect(
      (await stack.api.patch(`/contacts/${contact.id}`, { first_name: 'Grace', phone: '+1 555' }, { headers: { 'X-Request-Id': 'req-patch-1' } })).status,
    ).toBe(200);
    expect((await stack.api.patch(`/contacts/${contact.id}`, { first_name: 'Grace', custom_fields: { tier: 'gold' } })).status).toBe(200);
    expect((await stack.api.patch(`/contacts/${contact.id}`, { custom_fields: { tier: 'silver' } })).status).toBe(200);

    const history = await stack.api.get(`/contacts/${contact.id}/changes`);
    expect(history.status).toBe(200);
    expect(history.body.has_more).toBe(false);
    const [created, updated, custom, ...rest] = history.body.data;
    expect(rest).toEqual([]);
    expect(created).toMatchObject({
      object: 'contacts',
      record_id: contact.id,
      action: 'created',
      previous: null,
      actor: { type: 'api_key', id: keyId },
      via: 'api',
      request_id: 'req-create-1',
    });
    expect(created.id).toMatch(/^chg_[0-9a-z]{26}$/);
    expect(created.current).toEqual({ email: contact.email, first_name: 'Ada', 'custom_fields.tier': 'gold' });
    expect(created.changed.sort()).toEqual(['custom_fields.tier', 'email', 'first_name']);
    expect(updated).toMatchObject({
      action: 'updated',
      changed: ['first_name', 'phone'],
      previous: { first_name: 'Ada', phone: null },
      current: { first_name: 'Grace', phone: '+1 555' },
      request_id: 'req-patch-1',
    });
    expect(custom).toMatchObject({
      action: 'updated',
      changed: ['custom_fields.tier'],
      previous: { 'custom_fields.tier': 'gold' },
      current: { 'custom_fields.tier': 'silver' },
    });
    // Without X-Request-Id the gateway's own id is recorded, the one it answered with.
    expect(custom.request_id).toEqual(expect.any(String));

    const touching = await stack.api.get(`/contacts/${contact.id}/changes?field=custom_fields`);
    expect(touching.body.data.map((c: any) => c.id)).toEqual([created.id, custom.id]);
    const phone = await stack.api.get(`/contacts/${contact.id}/changes?field=phone`);
    expect(phone.body.data.map((c: any) => c.id)).toEqual([updated.id]);
  });

  it('keeps a deleted record history, pages it with a cursor, and answers 404 only for records it never knew', async () => {
    const contact = await newContact({ first_name: 'Temp' });
    for (const name of ['A', 'B', 'C']) await stack.api.patch(`/contacts/${contact.id}`, { last_name: name });
    expect((await stack.api.delete(`/contacts/${contact.id}`)).status).toBe(204);
    expect((await stack.api.get(`/contacts/${contact.id}`)).status).toBe(404);

    const first = await stack.api.get(`/contacts/${contact.id}/changes?limit=2`);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const entries = [...first.body.data];
    for (let cursor = first.body.next_cursor; cursor;) {
      const page = await stack.api.get(`/contacts/${contact.id}/changes?limit=2&cursor=${cursor}`);
      entries.push(...page.body.data);
      cursor = page.body.next_cursor;
    }
    expect(entries.map((c: any) => c.action)).toEqual(['created', 'updated', 'updated', 'updated', 'deleted']);
    const deleted = entries[entries.length - 1];
    expect(deleted).toMatchObject({ previous: { email: contact.email, first_name: 'Temp', last_name: 'C' }, current: null });
    expect((await stack.api.get(`/changes?record_id=${contact.id}`)).body.data).toHaveLength(5);

    const unknown = await stack.api.get('/contacts/cont_00000000000000000000000000/changes');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const foreignCursor = await stack.api.get(`/contacts/${contact.id}/changes?cursor=${first.body.next_cursor.slice(0, -2)}xx`);
    expect(foreignCursor.status).toBe(400);
    const otherList = await stack.api.get(`/changes?cursor=${first.body.next_cursor}`);
    expect(otherList.status).toBe(400);
    expect(otherList.body.error.details[0].field).toBe('cursor');
  });

  it('records a merge: merged on the winner naming the loser, the loser deleted into the winner, both via merge', async () => {
    const winner = await newContact({ first_name: 'Win' });
    const loser = await newContact({ first_name: 'Lose', phone: '+44 1' });
    const merged = await stack.api.post('/contacts/merge', { winner_id: winner.id, loser_id: loser.id }, { headers: { 'X-Request-Id': 'req-merge-1' } });
    expect(merged.status).toBe(200);
    const winnerLog = (await stack.api.get(`/contacts/${winner.id}/changes`)).body.data;
    expect(winnerLog[winnerLog.length - 1]).toMatchObject({
      action: 'merged',
      changed: ['merged_from', 'phone'],
      previous: { merged_from: null, phone: null },
      current: { merged_from: loser.id, phone: '+44 1' },
      via: 'merge',
      request_id: 'req-merge-1',
    });
    const loserLog = (await stack.api.get(`/contacts/${loser.id}/changes`)).body.data;
    expect(loserLog[loserLog.length - 1]).toMatchObject({ action: 'deleted', current: { merged_into: winner.id }, via: 'merge', request_id: 'req-merge-1' });
    expect(loserLog[loserLog.length - 1].previous).toMatchObject({ first_name: 'Lose', merged_into: null });
    const viaMerge = (await stack.api.get(`/changes?via=merge`)).body.data.map((c: any) => c.record_id);
    expect(viaMerge).toEqual(expect.arrayContaining([winner.id, loser.id]));
  });

  it('attributes an agent change through MCP to mcp, and answers list_changes', async () => {
    const contact = await newContact({ first_name: 'Agent' });
    const client = new Client({ name: 'crm-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', stack.gateway.url), {
        requestInit: { headers: { 'X-Api-Key': stack.apiKey, 'X-Request-Id': 'req-mcp-1' } },
      }),
    );
    try {
      const result = (await client.callTool({ name: 'update_record', arguments: { object: 'contacts', id: contact.id, data: { title: 'CTO' } } })) as {
        isError?: boolean;
      };
      expect(result.isError).toBeFalsy();
      const log = (await stack.api.get(`/contacts/${contact.id}/changes`)).body.data;
      expect(log[log.length - 1]).toMatchObject({ changed: ['title'], via: 'mcp', actor: { type: 'api_key', id: keyId }, request_id: 'req-mcp-1' });
      const listed = (await client.callTool({ name: 'list_changes', arguments: { record_id: contact.id } })) as { isError?: boolean; structuredContent?: any };
      expect(listed.isError).toBeFalsy();
      expect(listed.structuredContent.data.map((c: any) => c.via)).toEqual(['api', 'mcp']);
    } finally {
      await client.close();
    }
  });

  it('filters GET /changes by object, record, actor, channel and time, and pages across both services in id order', async () => {
    const other = await stack.api.post('/apikeys', { name: `writer-${tag()}`, scope: 'read-write' });
    const otherApi = stack.api.withKey(other.body.data.key);
    const before = new Date().toISOString();
    // Interleave writes kept by the contacts service and by the deals service.
    const pipeline = (
      await otherApi.post('/pipelines', {
        name: `P ${tag()}`,
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    const c1 = (await otherApi.post('/contacts', { email: `f.${tag()}@example.com` })).body.data;
    const deal = (await otherApi.post('/deals', { name: 'D', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, contact_id: c1.id })).body.data;
    await otherApi.patch(`/contacts/${c1.id}`, { title: 'VP' });
    await otherApi.patch(`/deals/${deal.id}`, { value: 10 });
    const after = new Date().toISOString();

    const mine = await stack.api.get(`/changes?actor_id=${other.body.data.id}`);
    expect(mine.status).toBe(200);
    // The deal's contact_id also made its primary association, an entry of its own (docs/associations.md).
    expect(mine.body.data.map((c: any) => `${c.object}:${c.action}:${c.changed[0] === `contacts.${c1.id}` ? 'association' : ''}`)).toEqual([
      'pipelines:created:',
      'contacts:created:',
      'deals:created:',
      'deals:updated:association',
      'contacts:updated:',
      'deals:updated:',
    ]);
    const ids = mine.body.data.map((c: any) => c.id);
    expect([...ids].sort()).toEqual(ids);
    expect(mine.body.data.every((c: any) => c.actor.id === other.body.data.id && c.actor.type === 'api_key')).toBe(true);

    // One entry per page: the cursor walks both services' entries in one order.
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await stack.api.get(`/changes?actor_id=${other.body.data.id}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      walked.push(...page.body.data.map((c: any) => c.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(ids);

    const deals = await stack.api.get(`/changes?object=deals&actor_id=${other.body.data.id}`);
    expect(deals.body.data.map((c: any) => c.record_id)).toEqual([deal.id, deal.id, deal.id]);
    const updates = await stack.api.get(`/changes?object=contacts&record_id=${c1.id}&via=api`);
    expect(updates.body.data.map((c: any) => c.action)).toEqual(['created', 'updated']);
    const inWindow = await stack.api.get(
      `/changes?created_after=${encodeURIComponent(before)}&created_before=${encodeURIComponent(after)}&actor_id=${other.body.data.id}`,
    );
    expect(inWindow.body.data.map((c: any) => c.id)).toEqual(ids);
    const later = await stack.api.get(`/changes?created_after=${encodeURIComponent(after)}&actor_id=${other.body.data.id}`);
    expect(later.body.data).toEqual([]);
    expect((await stack.api.get(`/changes?via=batch&actor_id=${other.body.data.id}`)).body.data).toEqual([]);
  });

  it.each([
    ['object', 'object=nothing_here'],
    ['object', 'object=Bad%20Slug'],
    ['record_id', 'record_id=not-an-id'],
    ['actor_id', 'actor_id=cont_01'],
    ['via', 'via=telepathy'],
    ['created_after', 'created_after=yesterday'],
    ['created_before', 'created_before=2026-13-01'],
    ['limit', 'limit=0'],
    ['cursor', 'cursor=%%%'],
  ])('answers 400 naming %s for a bad filter (%s)', async (field, query) => {
    const res = await stack.api.get(`/changes?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
  });

  it('answers 400 for a bad field path on a record history', async () => {
    const contact = await newContact();
    const res = await stack.api.get(`/contacts/${contact.id}/changes?field=${encodeURIComponent('a b')}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('field');
  });

  it('needs only the read scope', async () => {
    const reader = await stack.api.post('/apikeys', { name: `reader-${tag()}`, scope: 'read' });
    const contact = await newContact();
    const readApi = stack.api.withKey(reader.body.data.key);
    expect((await readApi.get(`/contacts/${contact.id}/changes`)).status).toBe(200);
    expect((await readApi.get('/changes')).status).toBe(200);
  });
});

describe('change history retention', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ env: { CHANGES_RETENTION_DAYS: '30', CHANGES_RETENTION_BATCH_SIZE: '2', CHANGES_RETENTION_INTERVAL_MS: '200' } });
  });
  afterAll(() => stack?.stop());

  it('deletes entries older than CHANGES_RETENTION_DAYS in bounded batches and keeps newer ones', async () => {
    const old = (await stack.api.post('/contacts', { email: `old.${tag()}@example.com` })).body.data;
    for (const title of ['a', 'b', 'c', 'd']) await stack.api.patch(`/contacts/${old.id}`, { title });
    const recent = (await stack.api.post('/contacts', { email: `new.${tag()}@example.com` })).body.data;
    // Age the first contact's five entries past the retention period, as time would.
    const db = new PgClient({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const aged = await db.query(`UPDATE contacts.changes SET occurred_at = now() - interval '31 days' WHERE record_id = $1`, [old.id]);
      expect(aged.rowCount).toBe(5);
    } finally {
      await db.end();
    }
    const job = stack.services.contacts!.app.get(ChangeRetentionJob);
    await eventually(async () => ((await stack.api.get(`/changes?record_id=${old.id}`)).body.data.length === 0 ? true : undefined));
    expect(job.totals.largestBatch).toBeLessThanOrEqual(2);
    expect(job.totals.removed).toBeGreaterThanOrEqual(5);
    expect((await stack.api.get(`/contacts/${recent.id}/changes`)).body.data).toHaveLength(1);
    // The record itself stays; only its history aged out.
    expect((await stack.api.get(`/contacts/${old.id}`)).status).toBe(200);
    expect((await stack.api.get(`/contacts/${old.id}/changes`)).body.data).toEqual([]);
  });
});
