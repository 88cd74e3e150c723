/** What waits in a service's outbox: committed events not yet acknowledged by JetStream (rows kept after it are not counted). */
export interface OutboxBacklog {
  pending: number;
  /** Age of the oldest waiting event, 0 when none waits. */
  oldest_age_seconds: number;
}

/** Reads the backlog of the outbox on the connection's search path (the service's own schema). */
export async function outboxBacklog(db: { query(sql: string): Promise<unknown> }): Promise<OutboxBacklog> {
  const [row] = (await db.query(
    `SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_age_seconds FROM outbox WHERE published_seq IS NULL`,
  )) as OutboxBacklog[];
  // Milliseconds are enough for an age read by people and alert rules.
  return { pending: row.pending, oldest_age_seconds: Math.round(row.oldest_age_seconds * 1000) / 1000 };
}
