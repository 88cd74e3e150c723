import { randomUUID } from 'crypto';
import { Client } from 'pg';
import { ApiClient, eventually } from '../support/api-client';
import { backendWaitingAt } from '../support/table-locks';
import { FaultStack, startFaultStack, STACK_PROCESSES } from '../support/fault-stack';

/**
 * A change and its history entry are written in one transaction (docs/changes.md), so SIGKILL at any
 * moment leaves both or neither. Three rounds, synchronised through the private PostgreSQL rather than by
 * timing:
 * - killed before commit: a SHARE lock on contacts.changes stops a PATCH at the statement that records
 *   its entry and events; contacts is killed there. After a restart the contact is as it was, with no
 *   entry and no event for the PATCH;
 * - killed after commit: the test waits for the PATCH's entry to be visible, then kills. After a restart
 *   the change and its one entry are both there;
 * - killed under load: eight writers PATCH contacts and deals with unique values while contacts and deals
 *   are each killed once; after restarts, every record's stored values are the last values its history
 *   recorded, every acknowledged PATCH has its entry, and the event log holds exactly one update event per
 *   update entry.
 */
const SIGNAL_TIMEOUT_MS = 120_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Entry {
  record_id: string;
  action: string;
  changed: string[];
  current: Record<string, unknown> | null;
  request_id: string | null;
}

describe('fault: SIGKILL while writes record their change history', () => {
  let stack: FaultStack;
  let db: Client;
  let holder: Client;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await startFaultStack();
    api = stack.api;
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    holder = new Client({ connectionString: stack.env.DATABASE_URL });
    await Promise.all([db.connect(), holder.connect()]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([db?.end().catch(() => undefined), holder?.end().catch(() => undefined)]);
    await stack?.stop();
  });

  const entriesOf = async (schema: 'contacts' | 'deals', recordId: string): Promise<Entry[]> =>
    (await db.query<Entry>(`SELECT record_id, action, changed, current, request_id FROM ${schema}.changes WHERE record_id = $1 ORDER BY id`, [recordId])).rows;

  /** Sends until answered with something other than a 5xx or a connection error (the service is restarting). */
  async function untilAnswered(send: () => Promise<{ status: number }>): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await send().catch(() => undefined);
      if (res && res.status < 500) return;
      if (Date.now() > deadline) throw new Error('the stack did not answer within 60 s');
      await sleep(100);
    }
  }

  it('before commit: neither the change, nor its entry, nor its event', async () => {
    const contact = (await api.post('/contacts', { email: `k1.${randomUUID().slice(0, 8)}@example.com`, title: 'Before' })).body.data;
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE contacts.changes IN SHARE MODE');
    const patch = api.patch(`/contacts/${contact.id}`, { title: 'Lost' }, { headers: { 'X-Request-Id': 'kill-before-commit' } }).catch((err: Error) => err);
    try {
      const pid = await backendWaitingAt(db, '%INSERT INTO changes%', SIGNAL_TIMEOUT_MS);
      // The PATCH's row update is done but uncommitted: its transaction has an id.
      const { rows } = await db.query<{ xid: string | null }>(`SELECT backend_xid::text AS xid FROM pg_stat_activity WHERE pid = $1`, [pid]);
      expect(rows[0]?.xid).toBeTruthy();
      await stack.processes.contacts.kill9();
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await holder.query('ROLLBACK');
    }
    await Promise.all([patch, stack.start('contacts')]);
    await untilAnswered(() => api.get(`/contacts/${contact.id}`));

    expect((await api.get(`/contacts/${contact.id}`)).body.data.title).toBe('Before');
    expect((await entriesOf('contacts', contact.id)).map((e) => e.action)).toEqual(['created']);
    const { rows: outbox } = await db.query(`SELECT 1 FROM contacts.outbox WHERE payload->>'request_id' = 'kill-before-commit'`);
    expect(outbox).toEqual([]);
    // The event log has caught up with a later write of the same contact, and holds nothing of the lost one.
    await api.patch(`/contacts/${contact.id}`, { title: 'After' }, { headers: { 'X-Request-Id': 'kill-before-commit-sentinel' } });
    const events = await eventually(
      async () => {
        const all = (await api.listAll('/events?type=contact.updated')) as Array<{ request_id: string; data: { contact_id: string } }>;
        const ours = all.filter((e) => e.data.contact_id === contact.id);
        return ours.some((e) => e.request_id === 'kill-before-commit-sentinel') ? ours : undefined;
      },
      60_000,
      100,
    );
    expect(events.map((e) => e.request_id)).toEqual(['kill-before-commit-sentinel']);
  });

  it('after commit: the change and exactly one entry', async () => {
    const contact = (await api.post('/contacts', { email: `k2.${randomUUID().slice(0, 8)}@example.com`, title: 'Before' })).body.data;
    const patch = api.patch(`/contacts/${contact.id}`, { title: 'Kept' }, { headers: { 'X-Request-Id': 'kill-after-commit' } }).catch((err: Error) => err);
    await eventually(
      async () => ((await entriesOf('contacts', contact.id)).some((e) => e.request_id === 'kill-after-commit') ? true : undefined),
      SIGNAL_TIMEOUT_MS,
      1,
    );
    await stack.processes.contacts.kill9();
    await Promise.all([patch, stack.start('contacts')]);
    await untilAnswered(() => api.get(`/contacts/${contact.id}`));

    expect((await api.get(`/contacts/${contact.id}`)).body.data.title).toBe('Kept');
    const entries = await entriesOf('contacts', contact.id);
    expect(entries.map((e) => [e.action, e.request_id])).toEqual([
      ['created', expect.any(String)],
      ['updated', 'kill-after-commit'],
    ]);
  });

  it('under load: stored values are the last values history recorded, and each update has one entry and one event', async () => {
    const pipeline = (
      await api.post('/pipelines', {
        name: 'Load',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    const contacts: string[] = [];
    const deals: string[] = [];
    for (let i = 0; i < 4; i++) {
      contacts.push((await api.post('/contacts', { email: `load${i}.${randomUUID().slice(0, 8)}@example.com` })).body.data.id);
      deals.push((await api.post('/deals', { name: `Load ${i}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id })).body.data.id);
    }
    const acknowledged: Array<{ schema: 'contacts' | 'deals'; id: string; requestId: string }> = [];
    let written = 0;
    let stop = false;
    const writer = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const requestId = `load-${w}-${n}`;
        const onDeal = n % 2 === 1;
        const id = onDeal ? deals[(w + n) % deals.length] : contacts[(w + n) % contacts.length];
        const res = await api
          .patch(onDeal ? `/deals/${id}` : `/contacts/${id}`, onDeal ? { name: requestId } : { title: requestId }, { headers: { 'X-Request-Id': requestId } })
          .catch(() => undefined);
        if (res?.status === 200) acknowledged.push({ schema: onDeal ? 'deals' : 'contacts', id, requestId });
        written += 1;
        if (!res) await sleep(50);
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    // Kills land once the load is under way; when exactly does not matter, only that writes are in flight.
    for (const victim of ['contacts', 'deals'] as const) {
      const target = written + 40;
      await eventually(async () => (written >= target ? true : undefined), 60_000, 5);
      await stack.processes[victim].kill9();
      await stack.start(victim);
    }
    const target = written + 40;
    await eventually(async () => (written >= target ? true : undefined), 60_000, 5);
    stop = true;
    await Promise.all(writers);

    const checks = [
      ...contacts.map((id) => ({ schema: 'contacts' as const, id, field: 'title', eventType: 'contact.updated', key: 'contact_id' })),
      ...deals.map((id) => ({ schema: 'deals' as const, id, field: 'name', eventType: 'deal.updated', key: 'deal_id' })),
    ];
    let updates = 0;
    for (const { schema, id, field } of checks) {
      const entries = await entriesOf(schema, id);
      const updated = entries.filter((e) => e.action === 'updated');
      updates += updated.length;
      const { rows } = await db.query(`SELECT ${field} AS value FROM ${schema}.${schema} WHERE id = $1`, [id]);
      const last = updated.length ? updated[updated.length - 1].current![field] : (entries[0].current![field] ?? null);
      // No change without its entry, and no entry without its change.
      expect({ id, stored: rows[0].value }).toEqual({ id, stored: last });
      expect(new Set(updated.map((e) => e.request_id)).size).toBe(updated.length);
    }
    for (const { schema, id, requestId } of acknowledged) {
      const entries = await entriesOf(schema, id);
      expect({ requestId, recorded: entries.some((e) => e.request_id === requestId) }).toEqual({ requestId, recorded: true });
    }
    expect(updates).toBeGreaterThan(80);

    // Each update entry has exactly one update event with its request id, once the log has caught up.
    const wanted = new Map<string, string>();
    for (const { schema, id } of checks) for (const e of await entriesOf(schema, id)) if (e.action === 'updated') wanted.set(e.request_id!, id);
    const logged = await eventually(
      async () => {
        const all = (await api.listAll('/events?type=contact.updated,deal.updated')) as Array<{ request_id: string; data: Record<string, string> }>;
        const ours = all.filter((e) => wanted.has(e.request_id));
        return new Set(ours.map((e) => e.request_id)).size === wanted.size ? ours : undefined;
      },
      60_000,
      250,
    );
    expect(logged.length).toBe(wanted.size);
    for (const event of logged) expect(event.data.contact_id ?? event.data.deal_id).toBe(wanted.get(event.request_id));
    for (const name of STACK_PROCESSES) expect({ name, exitCode: stack.processes[name].child.exitCode }).toEqual({ name, exitCode: null });
  }, 240_000);
});
