import { eventStreamName } from '@crm/contracts';
import { NatsConnection } from 'nats';
import { Client } from 'pg';

/** Every row of every table of every schema whose text holds one of `needles` (docs/privacy.md). */
export async function rowsNaming(db: Client, needles: readonly string[]): Promise<string[]> {
  const { rows: tables } = await db.query<{ s: string; t: string }>(
    `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const hits: string[] = [];
  for (const { s, t } of tables) {
    // Index expressions name functions without their schema: the planner looks them up on the path.
    await db.query(`SET search_path TO "${s}", public`);
    const { rows } = await db.query(`SELECT r::text AS row FROM "${s}"."${t}" r WHERE r::text ILIKE ANY($1)`, [needles.map((n) => `%${n}%`)]);
    hits.push(...rows.map((r) => `${s}.${t}: ${r.row.slice(0, 200)}`));
  }
  return hits;
}

/** The sequences of every message of the namespace's stream whose body holds one of `needles`. */
export async function streamMessagesNaming(nc: NatsConnection, namespace: string, needles: readonly string[]): Promise<number[]> {
  const jsm = await nc.jetstreamManager();
  const stream = eventStreamName(namespace);
  const info = await jsm.streams.info(stream);
  const hits: number[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const msg = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
    const text = msg ? new TextDecoder().decode(msg.data).toLowerCase() : '';
    if (needles.some((n) => text.includes(n.toLowerCase()))) hits.push(seq);
  }
  return hits;
}
