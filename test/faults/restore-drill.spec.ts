import { markRestored } from '@crm/messaging';
import { execFile } from 'child_process';
import { randomUUID } from 'crypto';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { promisify } from 'util';
import { ApiClient, eventually } from '../support/api-client';
import { FaultStack, STACK_PROCESSES, startFaultStack } from '../support/fault-stack';
import { Receiver } from '../support/webhooks-receiver';

const run = promisify(execFile);
const OP_DEADLINE_MS = 120_000;

/**
 * The restore drill of docs/operations.md ("Restore"): a backup (pg_dump) taken while clients write, more
 * writes after it, every process stopped, the database restored from the backup, `npm run restore-reconcile`,
 * the processes started again, and more writes. Afterwards the log is the restored database's history: each
 * contact the restored database holds has its contact.created exactly once, none of the contacts the restore
 * undid has one, the log has one system.restored, no event id twice; and nothing the webhook received after
 * the restore is about a change the restore undid.
 */
describe('fault: restore drill', () => {
  let stack: FaultStack;
  let receiver: Receiver;
  const dir = mkdtempSync(join(tmpdir(), 'crm-restore-'));

  beforeAll(async () => {
    stack = await startFaultStack({
      WEBHOOKS_ALLOW_INSECURE: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_RETRY_SCHEDULE_MS: '200,500,1000,2000,2000,2000,2000,2000',
      WEBHOOKS_RETRY_JITTER_PERCENT: '0',
    });
    receiver = await Receiver.start();
    expect((await stack.api.post('/webhooks', { name: 'restore', url: receiver.url, event_types: ['contact.created', 'system.restored'] })).status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Creates contacts one after another until `until` resolves; answers the ids acknowledged. */
  function writer(api: ApiClient, tag: string): { stop: () => Promise<string[]>; created: string[] } {
    const created: string[] = [];
    let running = true;
    const work = (async () => {
      while (running) {
        const headers = { 'Idempotency-Key': randomUUID() };
        const deadline = Date.now() + OP_DEADLINE_MS;
        for (;;) {
          const res = await api.post('/contacts', { email: `${tag}-${randomUUID().slice(0, 12)}@example.com` }, { headers }).catch(() => undefined);
          if (res?.status === 201) {
            created.push(res.body.data.id);
            break;
          }
          if (res && res.status < 500 && res.status !== 429 && res.status !== 409) throw new Error(`POST /contacts answered ${res.status}`);
          if (Date.now() > deadline) throw new Error('a write was not acknowledged in time');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    })();
    return {
      created,
      stop: async () => {
        running = false;
        await work;
        return created;
      },
    };
  }

  async function logged(): Promise<Array<{ id: string; type: string; data: Record<string, any> }>> {
    return stack.api.listAll('/events');
  }

  it('after a restore and restore-reconcile, the log is the restored history and no undone change is delivered', async () => {
    const database = new URL(stack.env.DATABASE_URL!).pathname.slice(1);
    const dump = join(dir, 'backup.dump');

    // Writes before and during the backup.
    const before = writer(stack.api, 'before');
    await eventually(async () => (before.created.length >= 20 ? true : undefined), OP_DEADLINE_MS, 50);
    await run('pg_dump', ['-Fc', '-f', dump, stack.pg.url(database)]);
    const duringBackup = before.created.length;
    await eventually(async () => (before.created.length >= duringBackup + 20 ? true : undefined), OP_DEADLINE_MS, 50);
    const all = await before.stop();
    // Every write so far is logged and delivered before the restore undoes some of them.
    await eventually(async () => {
      const ids = new Set((await logged()).filter((e) => e.type === 'contact.created').map((e) => e.data.contact_id));
      return all.every((id) => ids.has(id)) ? true : undefined;
    }, OP_DEADLINE_MS);
    await eventually(async () => (receiver.requests.filter((r) => r.json.type === 'contact.created').length >= all.length ? true : undefined), OP_DEADLINE_MS);

    // Restore: every process stopped, the database made again from the backup, its checkpoints marked.
    for (const name of STACK_PROCESSES) await stack.processes[name].stop();
    const admin = new Client({ connectionString: stack.pg.url('postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    await admin.end();
    await run('pg_restore', ['-d', stack.pg.url(database), dump]);
    const db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    const restored = new Set((await db.query<{ id: string }>(`SELECT id FROM contacts.contacts`)).rows.map((r) => r.id));
    const undone = all.filter((id) => !restored.has(id));
    // The backup was taken while writing: some writes are in it and some are not.
    expect(undone.length).toBeGreaterThan(0);
    expect(all.filter((id) => restored.has(id)).length).toBeGreaterThan(0);
    expect((await markRestored({ DATABASE_URL: stack.env.DATABASE_URL })).length).toBe(2);
    const deliveredBefore = receiver.requests.length;
    for (const name of STACK_PROCESSES) await stack.start(name);

    // Writes after the restore.
    const after = writer(stack.api, 'after');
    await eventually(async () => (after.created.length >= 10 ? true : undefined), OP_DEADLINE_MS, 50);
    const afterIds = await after.stop();
    for (const id of afterIds) restored.add(id);
    await db.end();

    const events = await eventually(async () => {
      const list = await logged();
      const ids = new Set(list.filter((e) => e.type === 'contact.created').map((e) => e.data.contact_id));
      return [...restored].every((id) => ids.has(id)) && list.some((e) => e.type === 'system.restored') ? list : undefined;
    }, OP_DEADLINE_MS * 2);
    const created = events.filter((e) => e.type === 'contact.created').map((e) => e.data.contact_id as string);
    const counts = new Map<string, number>();
    for (const id of created) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...restored].filter((id) => counts.get(id) !== 1)).toEqual([]);
    expect(created.filter((id) => !restored.has(id))).toEqual([]);
    expect(events.filter((e) => e.type === 'system.restored')).toHaveLength(1);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    // After the restore the webhook receives the marker and events of the restored history, never one the restore undid.
    await eventually(async () => (receiver.requests.slice(deliveredBefore).some((r) => r.json.type === 'system.restored') ? true : undefined), OP_DEADLINE_MS);
    const lastAfter = afterIds[afterIds.length - 1];
    await eventually(
      async () => (receiver.requests.slice(deliveredBefore).some((r) => r.json.data?.contact_id === lastAfter) ? true : undefined),
      OP_DEADLINE_MS,
    );
    const undoneSet = new Set(undone);
    expect(
      receiver.requests
        .slice(deliveredBefore)
        .filter((r) => undoneSet.has(String(r.json.data?.contact_id)))
        .map((r) => r.json.id),
    ).toEqual([]);
  }, 600_000);
});
