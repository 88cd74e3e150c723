import { randomUUID } from 'crypto';
import { Client } from 'pg';
import { ApiClient, ApiResponse, eventually } from '../support/api-client';
import { FaultStack, startFaultStack, STACK_PROCESSES } from '../support/fault-stack';

/**
 * An all_or_none batch of 200 contact creates, sent with an Idempotency-Key, while the contacts service
 * is killed with SIGKILL under it; then contacts is restarted and the same request retried with the same
 * key until it is answered. Whatever moment the kill lands: the batch is stored whole or not at all,
 * it is applied exactly once (200 contacts, 200 contact.created events, one per email), and a further
 * retry replays the stored answer and creates nothing.
 *
 * The kill is synchronised with the batch's progress through the fault suite's private PostgreSQL, not
 * by timing: the test holds a lock the service must pass at a chosen point, waits until
 * pg_stat_activity shows the contacts backend waiting on it, kills the process there, and ends the dead
 * process's backend (as PostgreSQL eventually would) before letting go of the lock:
 * - before commit: a SHARE lock on contacts.request_outcomes stops the batch's transaction at
 *   markRequestApplied, after its 200 inserts and before COMMIT;
 * - while its reply is recorded, before commit: a trigger on contacts.request_outcomes makes the
 *   statement that records the reply wait on an advisory lock the test holds. A batch records its reply
 *   in the transaction of its change, so no moment exists after the COMMIT with the reply unrecorded:
 *   a retry always gets the answer back;
 * - after the reply is recorded: the test waits for the recorded reply to appear and kills then, so the
 *   reply may or may not have reached the gateway;
 * plus rounds killed right after sending (0 to 150 ms, for variety only; nothing asserted depends on it).
 */
const ITEMS = 200;
const RETRY_DEADLINE_MS = 60_000;
const SIGNAL_TIMEOUT_MS = 120_000;
/** The advisory lock the reply-recording trigger waits on while the test holds it. */
const REPLY_HOLD_LOCK = 734_002_117;

type KillPoint = 'before commit' | 'while its reply is recorded, before commit' | 'after the reply is recorded' | 'right after sending';
const POINTS: KillPoint[] = [
  'before commit',
  'while its reply is recorded, before commit',
  'after the reply is recorded',
  'right after sending',
  'right after sending',
];

interface Round {
  point: KillPoint;
  firstAnswer: string;
  storedAfterKill: number;
  retries: number;
  finalStatus: number;
  recoveredBy: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fault: contacts killed during an all_or_none batch with an Idempotency-Key', () => {
  let stack: FaultStack;
  /** The test's own sessions on the stack's database: one to read, one to hold the locks that pause the batch. */
  let db: Client;
  let holder: Client;
  const rounds: Round[] = [];
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
    if (rounds.length) process.stdout.write(`batch fault rounds:\n${rounds.map((r) => `  ${JSON.stringify(r)}`).join('\n')}\n`);
  });

  /** Contacts stored with these emails, by lowercased email: id and how many rows. */
  async function stored(emails: string[]): Promise<Map<string, { id: string; n: number }>> {
    const { rows } = await db.query<{ email: string; id: string; n: number }>(
      `SELECT lower(email) AS email, min(id) AS id, count(*)::int AS n FROM contacts.contacts WHERE lower(email) = ANY($1::text[]) GROUP BY lower(email)`,
      [emails.map((e) => e.toLowerCase())],
    );
    return new Map(rows.map((r) => [r.email, { id: r.id, n: r.n }]));
  }

  /** The contacts backend waiting on a lock while running a statement on request_outcomes: the batch, paused where the test wanted it. */
  async function pausedBackend(waitEvent: 'relation' | 'advisory'): Promise<number> {
    return eventually(
      async () => {
        const { rows } = await db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
              AND wait_event_type = 'Lock' AND wait_event = $1 AND query LIKE '%request_outcomes%'`,
          [waitEvent],
        );
        return rows.length === 1 ? rows[0].pid : undefined;
      },
      SIGNAL_TIMEOUT_MS,
      5,
    );
  }

  /** Arms the pause for `point`; answers the backend that reached it (after the first request is sent) and how to let go. */
  async function arm(point: KillPoint, since: Date): Promise<{ reached(): Promise<number | undefined>; release(): Promise<void> }> {
    if (point === 'before commit') {
      // The batch's transaction inserts its rows, then marks the keyed request applied (INSERT INTO
      // request_outcomes, ROW EXCLUSIVE), then commits: a SHARE lock held here stops it in between.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE contacts.request_outcomes IN SHARE MODE');
      return {
        reached: async () => {
          const pid = await pausedBackend('relation');
          // Its rows are written (it has a transaction id) and not committed: nobody else sees them.
          const { rows } = await db.query<{ xid: string | null }>(`SELECT backend_xid::text AS xid FROM pg_stat_activity WHERE pid = $1`, [pid]);
          expect(rows[0]?.xid).toBeTruthy();
          return pid;
        },
        release: async () => void (await holder.query('ROLLBACK')),
      };
    }
    if (point === 'while its reply is recorded, before commit') {
      // The reply is recorded by an update of the request's row (reply from NULL to the answer), inside the
      // batch's transaction: a trigger makes that statement wait on an advisory lock the test holds.
      await holder.query(`
        CREATE OR REPLACE FUNCTION contacts.fault_hold_reply() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM pg_advisory_xact_lock(${REPLY_HOLD_LOCK});
          RETURN NEW;
        END $$`);
      await holder.query(`
        CREATE TRIGGER fault_hold_reply BEFORE UPDATE ON contacts.request_outcomes
        FOR EACH ROW WHEN (OLD.reply IS NULL AND NEW.reply IS NOT NULL) EXECUTE FUNCTION contacts.fault_hold_reply()`);
      await holder.query('SELECT pg_advisory_lock($1)', [REPLY_HOLD_LOCK]);
      return {
        reached: () => pausedBackend('advisory'),
        release: async () => {
          await holder.query('DROP TRIGGER fault_hold_reply ON contacts.request_outcomes');
          await holder.query('DROP FUNCTION contacts.fault_hold_reply()');
          await holder.query('SELECT pg_advisory_unlock($1)', [REPLY_HOLD_LOCK]);
        },
      };
    }
    if (point === 'after the reply is recorded') {
      // No pause: the recorded reply appearing is the signal, and the kill races the reply to the gateway.
      return {
        reached: async () => {
          await eventually(
            async () =>
              (await db.query(`SELECT 1 FROM contacts.request_outcomes WHERE created_at >= $1 AND reply IS NOT NULL`, [since])).rowCount ? true : undefined,
            SIGNAL_TIMEOUT_MS,
            1,
          );
          return undefined;
        },
        release: async () => undefined,
      };
    }
    return {
      reached: async () => {
        await sleep(Math.floor(Math.random() * 150)); // variety only: nothing asserted depends on when this lands
        return undefined;
      },
      release: async () => undefined,
    };
  }

  /** Sends the request until it is answered with something other than a retryable 503, 409 "in progress", 429 or connection error. */
  async function untilAnswered(body: object, key: string): Promise<{ res: ApiResponse; retries: number }> {
    const deadline = Date.now() + RETRY_DEADLINE_MS;
    for (let retries = 0; ; retries++) {
      const res = await api.post('/contacts/batch', body, { headers: { 'Idempotency-Key': key } }).catch((err: Error) => {
        if (err.message.startsWith('Contract:')) throw err; // an answer the API does not document is a failure, not a blip
        return undefined;
      });
      const retryable = !res || res.status >= 500 || res.status === 429 || (res.status === 409 && /in progress/.test(res.body?.error?.message));
      if (!retryable) return { res: res!, retries };
      if (Date.now() > deadline)
        throw new Error(
          `no answer but retryable ones within ${RETRY_DEADLINE_MS} ms; last: ${res ? `${res.status} ${res.text.slice(0, 300)}` : 'connection error'}`,
        );
      await sleep(100);
    }
  }

  async function round(point: KillPoint): Promise<{ emails: string[]; ids: Map<string, string> }> {
    const tag = randomUUID().slice(0, 8);
    const emails = Array.from({ length: ITEMS }, (_, i) => `batch-fault-${tag}-${i}@example.com`);
    const body = { operation: 'create', all_or_none: true, items: emails.map((email, i) => ({ email, first_name: `B${i}` })) };
    const key = randomUUID();
    const since = (await db.query<{ now: Date }>('SELECT now()')).rows[0].now;

    // 1. Send, and kill contacts at the chosen point of the batch.
    const pause = await arm(point, since);
    const first = api.post('/contacts/batch', body, { headers: { 'Idempotency-Key': key } }).then(
      (res) => `${res.status}${res.status >= 400 ? ` ${res.body?.error?.code}` : ''}`,
      (err: Error) => `error: ${err.message.slice(0, 200)}`,
    );
    try {
      const pid = await pause.reached();
      await stack.processes.contacts.kill9();
      // The dead process's session, paused mid-statement, is ended as PostgreSQL would end it on noticing
      // the lost client; nothing it had not sent may complete once the lock is let go.
      if (pid !== undefined) await db.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await pause.release();
    }

    // 2. Restart contacts; the batch is stored whole or not at all.
    const [firstAnswer] = await Promise.all([first, stack.start('contacts')]);
    const afterKill = await stored(emails);
    const storedAfterKill = [...afterKill.values()].reduce((sum, r) => sum + r.n, 0);
    expect({ point, storedAfterKill: [0, ITEMS].includes(storedAfterKill) ? 'none or all' : storedAfterKill }).toEqual({
      point,
      storedAfterKill: 'none or all',
    });
    // Where the kill was synchronised, the batch was where the test stopped it.
    if (point === 'before commit' || point === 'while its reply is recorded, before commit')
      expect({ point, storedAfterKill }).toEqual({ point, storedAfterKill: 0 });
    if (point === 'after the reply is recorded') expect({ point, storedAfterKill }).toEqual({ point, storedAfterKill: ITEMS });

    // 3. Retry with the same key until answered: applied exactly once.
    const { res, retries } = await untilAnswered(body, key);
    const after = await stored(emails);
    expect({ point, rows: [...after.values()].reduce((sum, r) => sum + r.n, 0), emails: after.size }).toEqual({ point, rows: ITEMS, emails: ITEMS });
    const ids = new Map([...after].map(([email, r]) => [email, r.id]));
    expect({ point, status: res.status, text: res.status === 200 ? '' : res.text.slice(0, 500) }).toEqual({ point, status: 200, text: '' });
    const items = res.body.data as Array<{ index: number; status: number; data?: { id: string; email: string } }>;
    expect(items.map((item) => [item.index, item.status])).toEqual(emails.map((_, i) => [i, 201]));
    // The answer names the rows stored, item by item: a recorded reply replayed, or the one apply.
    expect(items.map((item) => [item.data?.email, item.data?.id])).toEqual(emails.map((email) => [email, ids.get(email)]));
    // Through the API too.
    const listed = await api.post('/contacts/query', { filter: { email: { $in: emails } }, limit: ITEMS });
    expect(listed.status).toBe(200);
    expect(new Set(listed.body.data.map((c: { id: string }) => c.id))).toEqual(new Set(ids.values()));
    expect(listed.body.has_more).toBe(false);

    // 4. Another retry replays the stored answer and creates nothing.
    const replay = await api.post('/contacts/batch', body, { headers: { 'Idempotency-Key': key } });
    expect({ point, status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({ point, status: res.status, replayed: 'true' });
    expect(replay.body).toEqual(res.body);
    expect(await stored(emails)).toEqual(after);

    rounds.push({
      point,
      firstAnswer,
      storedAfterKill,
      retries,
      finalStatus: res.status,
      recoveredBy:
        res.status !== 200
          ? 'documented 409: applied, reply lost'
          : res.headers.get('idempotent-replayed')
            ? 'gateway replay'
            : 'service (recorded reply or first apply)',
    });
    return { emails, ids };
  }

  it(
    'stores an all_or_none batch whole or not at all, and its keyed retries apply it exactly once, wherever the SIGKILL lands',
    async () => {
      const batches: Array<{ point: KillPoint; emails: string[]; ids: Map<string, string> }> = [];
      for (const point of POINTS) batches.push({ point, ...(await round(point)) });

      // Logged: exactly one contact.created per email of every batch, naming the stored contact. Read once all
      // rounds are done, so an event published twice by a relay killed mid-publish has had time to show.
      const wanted = new Map(batches.flatMap((b) => b.emails.map((email) => [email, b.point] as const)));
      const created = await eventually(
        async () => {
          const events = (await api.listAll('/events?type=contact.created')) as Array<{ id: string; data: { contact_id: string; email: string } }>;
          const ours = events.filter((e) => wanted.has(e.data.email));
          return new Set(ours.map((e) => e.data.email)).size === wanted.size ? ours : undefined;
        },
        120_000,
        250,
      );
      for (const { point, emails, ids } of batches) {
        const events = created.filter((e) => emails.includes(e.data.email));
        expect({ point, events: events.length, distinctIds: new Set(events.map((e) => e.id)).size }).toEqual({ point, events: ITEMS, distinctIds: ITEMS });
        expect(new Map(events.map((e) => [e.data.email, e.data.contact_id]))).toEqual(ids);
      }
      // Nothing created twice, and every process still up.
      for (const { point, emails } of batches)
        expect({ point, stored: [...(await stored(emails)).values()].filter((r) => r.n !== 1) }).toEqual({ point, stored: [] });
      for (const name of STACK_PROCESSES) expect({ name, exitCode: stack.processes[name].child.exitCode }).toEqual({ name, exitCode: null });
      // Room for every round to use its waits in full, then the wait for the log: a loaded machine is many times slower.
    },
    POINTS.length * (SIGNAL_TIMEOUT_MS + RETRY_DEADLINE_MS + 60_000) + 180_000,
  );
});
