import { randomUUID } from 'crypto';
import { Client } from 'pg';
import { ApiClient, ApiResponse, eventually } from '../support/api-client';
import { FaultStack, startFaultStack } from '../support/fault-stack';

/**
 * The outbox relay publishes a window of events without waiting for each acknowledgement. Here it is
 * interrupted in the middle of a window while a sync runs, three ways: the contacts service killed with
 * SIGKILL, NATS restarted (once with a window holding two or more events of most contacts), and NATS
 * frozen until the window's publishes time out. The sync: four clients,
 * each updating its own 200 contacts in one all_or_none batch per round, with an Idempotency-Key and
 * retried until acknowledged, setting last_name to the round number. So every contact is updated many
 * times in a known order, and after each fault the log must hold, for every contact, exactly one
 * contact.updated per round, in round order: nothing lost, nothing twice, no later change ahead of an
 * earlier one.
 *
 * "Mid-window" is a signal, not a time: the relay reads its window and publishes it inside the
 * transaction that holds its lane's lock, so its session shows in pg_stat_activity as idle in transaction
 * on the outbox read while events are on their way to JetStream, and the test acts only then.
 */
const CLIENTS = 4;
const PER_CLIENT = 200;
/** Rounds every client completes after the fault, so the relay must recover under load. */
const ROUNDS_AFTER = 2;
const RETRY_DEADLINE_MS = 120_000;
const APPLIED_UNANSWERED = /was applied, but its response was not recorded/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const roundName = (round: number) => `r${String(round).padStart(5, '0')}`;

class Sync {
  private running = true;
  private readonly workers: Promise<void>[];
  /** The last round each client had acknowledged. */
  readonly acked: number[];

  constructor(
    private readonly api: ApiClient,
    private readonly contacts: string[][],
    start: number[],
  ) {
    this.acked = [...start];
    this.workers = contacts.map((_, i) => this.work(i));
  }

  private async work(client: number): Promise<void> {
    while (this.running) {
      const round = this.acked[client] + 1;
      const body = { operation: 'update', all_or_none: true, items: this.contacts[client].map((id) => ({ id, last_name: roundName(round) })) };
      const key = `relay-fault-${client}-${round}-${randomUUID()}`;
      const deadline = Date.now() + RETRY_DEADLINE_MS;
      for (;;) {
        const res: ApiResponse | undefined = await this.api.post('/contacts/batch', body, { headers: { 'Idempotency-Key': key } }).catch((err: Error) => {
          if (err.message.startsWith('Contract:')) throw err;
          return undefined;
        });
        if (res?.status === 200 || (res?.status === 409 && APPLIED_UNANSWERED.test(res.body?.error?.message))) break;
        const retryable = !res || res.status >= 500 || res.status === 429 || (res.status === 409 && /in progress/.test(res.body?.error?.message));
        if (!retryable) throw new Error(`round ${round} of client ${client} answered ${res.status}: ${res.text.slice(0, 300)}`);
        if (Date.now() > deadline) throw new Error(`round ${round} of client ${client} was not acknowledged within ${RETRY_DEADLINE_MS} ms`);
        await sleep(100);
      }
      this.acked[client] = round;
    }
  }

  /** Resolves once every client has acknowledged `rounds` more rounds than when this was called. */
  async advance(rounds: number): Promise<void> {
    const target = this.acked.map((r) => r + rounds);
    await eventually(async () => (this.acked.every((r, i) => r >= target[i]) ? true : undefined), RETRY_DEADLINE_MS * 2, 50);
  }

  async stop(): Promise<number[]> {
    this.running = false;
    await Promise.all(this.workers);
    return this.acked;
  }
}

describe('fault: the outbox relay interrupted mid-window under a sync', () => {
  let stack: FaultStack;
  let db: Client;
  const contacts: string[][] = [];
  let rounds: number[] = Array.from({ length: CLIENTS }, () => 0);
  /** Where the log ended before the case ran. */
  let cursor: string;

  beforeAll(async () => {
    stack = await startFaultStack();
    db = new Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    for (let c = 0; c < CLIENTS; c++) {
      const tag = randomUUID().slice(0, 8);
      const res = await stack.api.post('/contacts/batch', {
        operation: 'create',
        all_or_none: true,
        items: Array.from({ length: PER_CLIENT }, (_, i) => ({ email: `relay-${tag}-${i}@example.com`, last_name: roundName(0) })),
      });
      expect(res.status).toBe(200);
      contacts.push(res.body.data.map((item: { data: { id: string } }) => item.data.id));
    }
  }, 180_000);

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    await stack?.stop();
  });

  beforeEach(async () => {
    cursor = await endOfLog();
  });

  async function endOfLog(): Promise<string> {
    let next: string | undefined;
    for (;;) {
      const res = await stack.api.get(`/events?limit=200${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
      expect(res.status).toBe(200);
      next = res.body.next_cursor;
      if (!res.body.has_more) return next!;
    }
  }

  /** The relay of contacts with a window read and not yet settled: its session, idle in its transaction after the outbox read. */
  async function midWindow(): Promise<{ pid: number; xact: string }> {
    return eventually(
      async () => {
        const { rows } = await db.query<{ pid: number; xact: string; pending: number }>(
          `SELECT a.pid, a.xact_start::text AS xact, (SELECT count(*)::int FROM contacts.outbox WHERE published_seq IS NULL) AS pending FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.state = 'idle in transaction'
              AND a.query LIKE '%crm:outbox:contacts%' AND a.query LIKE '%FROM outbox WHERE published_seq IS NULL ORDER BY seq%'`,
        );
        return rows.length === 1 && rows[0].pending > 0 ? rows[0] : undefined;
      },
      RETRY_DEADLINE_MS,
      2,
    );
  }

  /** The log's contact.updated events since the case began, once every acknowledged round of every contact is there. */
  /**
   * Every contact.updated event of the case's contacts in the log, once nothing more can arrive: every row
   * of the contacts outbox is published (acknowledged by JetStream; rows stay, marked, until every reader and
   * durable consumer has passed them, and only a stream reset sends them again), and a marker contact
   * created after that is in the log, so every message the stream held before it has been read too. A
   * late republish of an event already logged would be in what this reads, not after it.
   */
  async function loggedUpdates(final: number[]): Promise<Map<string, Array<{ id: string; value: string }>>> {
    const owner = new Map(contacts.flatMap((ids, c) => ids.map((id) => [id, c] as const)));
    const isLast = (byContact: Map<string, Array<{ value: string }>>) =>
      [...owner].every(([id, c]) => byContact.get(id)?.some((e) => e.value === roundName(final[c])));
    const read = async () => {
      const byContact = new Map<string, Array<{ id: string; value: string }>>();
      for (const event of await eventsSince(cursor, 'contact.updated')) {
        const id = event.data.contact_id as string;
        if (owner.has(id)) byContact.set(id, [...(byContact.get(id) ?? []), { id: event.id, value: event.data.current.last_name }]);
      }
      return byContact;
    };
    await eventually(async () => (isLast(await read()) ? true : undefined), RETRY_DEADLINE_MS * 2, 200);
    await eventually(
      async () => ((await db.query('SELECT count(*)::int AS n FROM contacts.outbox WHERE published_seq IS NULL')).rows[0].n === 0 ? true : undefined),
      RETRY_DEADLINE_MS,
      100,
    );
    const marker = await stack.api.post('/contacts', { email: `relay-marker-${randomUUID().slice(0, 8)}@example.com` });
    expect(marker.status).toBe(201);
    await eventually(
      async () => ((await eventsSince(cursor, 'contact.created')).some((e) => e.data.contact_id === marker.body.data.id) ? true : undefined),
      RETRY_DEADLINE_MS * 2,
      200,
    );
    return read();
  }

  /** Every event of `type` after `from`, in log order. */
  async function eventsSince(from: string, type: string): Promise<Array<{ id: string; data: Record<string, any> }>> {
    const events: Array<{ id: string; data: Record<string, any> }> = [];
    let next = from;
    for (;;) {
      const res = await stack.api.get(`/events?type=${type}&limit=200&cursor=${encodeURIComponent(next)}`);
      if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
      events.push(...res.body.data);
      next = res.body.next_cursor;
      if (!res.body.has_more) return events;
    }
  }

  async function underSync(fault: (sync: Sync) => Promise<void>): Promise<void> {
    const start = [...rounds];
    const sync = new Sync(stack.api, contacts, start);
    try {
      await sync.advance(1);
      await fault(sync);
      await sync.advance(ROUNDS_AFTER);
    } finally {
      rounds = await sync.stop();
    }
    const logged = await loggedUpdates(rounds);
    const ids = [...logged.values()].flat().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    contacts.forEach((ids, c) => {
      const expected = Array.from({ length: rounds[c] - start[c] }, (_, i) => roundName(start[c] + 1 + i));
      for (const id of ids) expect({ id, values: logged.get(id)?.map((e) => e.value) }).toEqual({ id, values: expected });
    });
  }

  it('loses, repeats and reorders nothing when the relaying service is killed with SIGKILL mid-window', async () => {
    await underSync(async () => {
      await midWindow();
      await stack.processes.contacts.kill9();
      await stack.start('contacts');
    });
  }, 600_000);

  it('loses, repeats and reorders nothing when NATS restarts mid-window', async () => {
    await underSync(async () => {
      await midWindow();
      await stack.nats.stop();
      await stack.nats.start();
    });
  }, 600_000);

  it('loses, repeats and reorders nothing when NATS restarts while a window holds several events per contact', async () => {
    // The test holds the lane's lock while every client completes two more rounds, so the outbox holds two
    // updates or more of each contact and the next window carries them back to back: a publish lost with
    // the socket while a later one of its contact landed would show as a contact's rounds out of order.
    const lane = (fn: string) => db.query(`SELECT ${fn}(hashtext('crm:outbox:contacts'))`);
    await underSync(async (sync) => {
      await lane('pg_advisory_lock');
      try {
        await sync.advance(2);
      } finally {
        await lane('pg_advisory_unlock');
      }
      await midWindow();
      await stack.nats.stop();
      await stack.nats.start();
    });
  }, 600_000);

  it('loses, repeats and reorders nothing when the publishes of a window time out', async () => {
    await underSync(async () => {
      const window = await midWindow();
      stack.nats.pause();
      try {
        // The window settles only when its publishes have timed out, the broker answering nothing: the
        // relay then ends the transaction it was seen in.
        await eventually(
          async () => {
            const { rows } = await db.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND xact_start::text = $2`, [window.pid, window.xact]);
            return rows.length === 0 ? true : undefined;
          },
          RETRY_DEADLINE_MS,
          20,
        );
      } finally {
        stack.nats.resume();
      }
    });
  }, 600_000);
});
