import { DEFAULT_DATABASE_URL, Env, urlVar } from '@crm/common';
import { Client } from 'pg';
import { RESTORED_STREAM } from './stream-recovery';

/** The readers' checkpoints: the event log's (schema events) and the webhook intake's (schema webhooks). */
const CHECKPOINTS = [
  { schema: 'events', table: 'log_checkpoint' },
  { schema: 'webhooks', table: 'intake_checkpoint' },
] as const;

/**
 * `npm run restore-reconcile`, after restoring the database from a backup and before starting the
 * processes (docs/operations.md, "Restore"): marks both readers' checkpoints as restored. At their next
 * start the event log and the webhook intake then recover as from a stream reset, but read on from the
 * stream's end: they take every event the restored outboxes hold (each once: the log skips ids it has),
 * skip the stream's events after the restored checkpoint (changes the restore undid, or events the outboxes
 * send again), and the log appends a `system.restored` marker. Answers what it marked.
 */
export async function markRestored(env: Env): Promise<string[]> {
  const client = new Client({ connectionString: urlVar(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres', 'postgresql']) });
  await client.connect();
  try {
    const marked: string[] = [];
    for (const { schema, table } of CHECKPOINTS) {
      const { rows } = await client.query<{ seq: string }>(`UPDATE "${schema}"."${table}" SET stream = $1 RETURNING stream_seq::text AS seq`, [
        RESTORED_STREAM,
      ]);
      marked.push(`${schema}.${table} at stream sequence ${rows[0]?.seq ?? '(none)'}`);
    }
    return marked;
  } finally {
    await client.end();
  }
}
