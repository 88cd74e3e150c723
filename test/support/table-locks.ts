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

  /** Resolves once no statement waits for a lock, within 20 s. */
  const noneWaiting = () => eventually(async () => ((await waiting()) === 0 ? true : undefined), 20_000, 100);
  return { whileLocked, waiting, noneWaiting };
}
