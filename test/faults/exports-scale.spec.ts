import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { ExportHandoff, HandoffResult, withoutVersions } from '../support/export-handoff';
import { FaultStack, startFaultStack } from '../support/fault-stack';

/**
 * The export's handoff at scale (docs/exports.md): 20,000 contacts and 5,000 deals, an export taken while
 * another client creates, updates and deletes records one at a time; the files plus the events after
 * `as_of` are exactly what the queries answer once the writes stop. Then again with the exporting service
 * (events) killed by SIGKILL once the export has written rows: a new events process takes the export over
 * when its heartbeat goes stale and runs it again from nothing, and the guarantee holds for what it hands
 * over. The system runs as OS processes on private servers, as in production.
 */
const CONTACTS = 20_000;
const DEALS = 5_000;
const tag = randomBytes(4).toString('hex');

describe('fault: exports at 20,000 contacts and 5,000 deals, and through a SIGKILL of the exporter', () => {
  let stack: FaultStack;
  let db: Client;
  let handoff: ExportHandoff;

  beforeAll(async () => {
    stack = await startFaultStack({ RPC_TIMEOUT_MS: '60000', EXPORTS_POLL_MS: '100', EXPORTS_STALE_SECONDS: '5' });
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    handoff = new ExportHandoff(stack.api, tag);
    await handoff.seed(CONTACTS, DEALS);
  }, 900_000);

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    await stack?.stop();
  });

  function expectHandedOff({ done, copy, contacts, deals, writesDuring }: HandoffResult): void {
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: 'completed', error: null });
    expect(writesDuring).toBeGreaterThan(10);
    expect(contacts.size).toBeGreaterThan(CONTACTS * 0.9);
    expect(deals.size).toBeGreaterThan(DEALS * 0.9);
    expect(withoutVersions(copy.contacts)).toEqual(contacts);
    expect(withoutVersions(copy.deals)).toEqual(deals);
  }

  it('hands off at scale: the files plus the events after as_of rebuild exactly what the queries answer', async () => {
    expectHandedOff(await handoff.run());
  }, 900_000);

  it('completes after the exporter is killed mid-export, run again from nothing by the restarted service, and hands off the same', async () => {
    let rowsAtKill = 0;
    const result = await handoff.run(async (exportId) => {
      // Killed once it has written rows and before it is done: read from the export's own progress.
      rowsAtKill = await eventually(
        async () => {
          const res = await stack.api.get(`/exports/${exportId}`);
          const rows = res.body.data?.progress?.contacts?.rows ?? 0;
          const status = res.body.data?.status;
          if (status === 'completed' || status === 'failed') throw new Error(`the export is ${status} before it was killed`);
          return rows > 0 ? rows : undefined;
        },
        600_000,
        20,
        (err) => err instanceof Error && err.message.startsWith('the export is'),
      );
      await stack.processes.events.kill9();
      await stack.start('events');
    });
    expect(rowsAtKill).toBeLessThan(CONTACTS);
    const { rows } = await db.query<{ attempt: number }>(`SELECT attempt FROM events.exports WHERE id = $1`, [result.done.id]);
    expect(rows[0].attempt).toBe(2);
    expectHandedOff(result);
  }, 900_000);
});
