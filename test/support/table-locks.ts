import { Client } from 'pg';
import { eventually } from './api-client';

/**
 * Holding up a request's statements with a lock on the table they read, so a test of a deadline depends
 * on no machine's speed: each statement would wait for as long as it is allowed to.
 */
export function tableLocks(databaseUrl: string) {
  /** Runs `work` while another session holds `table` locked, so every statement reading it waits. */
  async function whileLocked<T>(table: string, work: () => Promise<T>): Promise<T> {
    const holder = new Client({ connectionString: databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      return await work();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }

  /** Statements of the database waiting for a lock: none once every part of a request has given up. */
  async function waiting(): Promise<number> {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      return rows[0].n;
    } finally {
      await db.end();
    }
  }

  /** Resolves once no statement waits for a lock, within 20 s: well inside the minute the deadline tests give the services, so a statement that ran on is still seen. */
  const noneWaiting = () => eventually(async () => ((await waiting()) === 0 ? true : undefined), 20_000, 100);

  /**
   * `request`'s answer while `table` is locked, with proof of both halves: a statement of it was seen
   * waiting for the lock (so it reached the database and the answer is not one from before it), and once
   * it is answered, with the lock still held, nothing waits any more (a statement that ran on would).
   */
  async function answeredWhileLocked<T>(table: string, request: () => Promise<T>): Promise<{ answer: T; seenWaiting: boolean }> {
    return whileLocked(table, async () => {
      let done = false;
      const pending = request().finally(() => (done = true));
      let seenWaiting = false;
      while (!done && !seenWaiting) {
        seenWaiting = (await waiting()) > 0;
        if (!seenWaiting) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const answer = await pending;
      await noneWaiting();
      return { answer, seenWaiting };
    });
  }
  return { whileLocked, waiting, noneWaiting, answeredWhileLocked };
}

/**
 * The one backend of the database waiting for a relation lock while running a statement like `statement`
 * (a LIKE pattern), once there is exactly one: the signal that a request reached that statement and is
 * held there by a lock the test holds.
 */
export function backendWaitingAt(db: Client, statement: string, timeoutMs: number): Promise<number> {
  return eventually(
    async () => {
      const { rows } = await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
           AND wait_event_type = 'Lock' AND wait_event = 'relation' AND query LIKE $1`,
        [statement],
      );
      return rows.length === 1 ? rows[0].pid : undefined;
    },
    timeoutMs,
    5,
  );
}
