import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two steps between an event's arrival and its first attempt, each as one function call, so an
 * event waits for two round trips to PostgreSQL before it is sent instead of nine.
 *
 * webhook_take_in: copies a batch of events from the stream into webhook_events, in the order given,
 * skipping those at or below the intake checkpoint and any id already there, and moves the checkpoint
 * to the batch's last stream sequence. It holds the insert lock (`p_lock`, a transaction advisory lock
 * the intake's other writers take too) until its commit, so positions become visible in increasing
 * order. Answers whether it added an event an active subscription may want: only then is a claim worth
 * making, so a deployment without subscriptions makes none.
 *
 * webhook_claim: leases up to `p_limit` due subscriptions (active, not leased, not waiting for a retry,
 * with an event after their bookmark), skipping those in `p_busy` (this replica's own turns still under
 * way) and any another replica is claiming. Attempts a stopped replica left pending are marked failed,
 * and each claimed subscription's first attempt is prepared with `webhook_prepare_attempt`, the delivery
 * ids taken from `p_deliveries` in turn. Answers a jsonb array of {id, delivery, attempt}. Like the rest
 * of the delivery bookkeeping it commits without waiting for the WAL flush (see dispatcher.service.ts).
 */
export class AddIntakeAndClaimFunctions1764900000000 implements MigrationInterface {
  name = 'AddIntakeAndClaimFunctions1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION webhook_take_in(p_lock text, p_seqs bigint[], p_ids text[], p_types text[], p_bodies text[], p_traces text[])
      RETURNS boolean LANGUAGE plpgsql AS $fn$
      DECLARE
        copied_through bigint;
        added integer;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext(p_lock));
        SELECT stream_seq INTO copied_through FROM intake_checkpoint;
        INSERT INTO webhook_events (id, type, body, trace_context)
        SELECT e.id, e.type, e.body, e.trace
        FROM unnest(p_seqs, p_ids, p_types, p_bodies, p_traces) WITH ORDINALITY AS e(seq, id, type, body, trace, n)
        WHERE e.seq > copied_through
        ORDER BY e.n
        ON CONFLICT (id) DO NOTHING;
        GET DIAGNOSTICS added = ROW_COUNT;
        UPDATE intake_checkpoint SET stream_seq = p_seqs[cardinality(p_seqs)] WHERE stream_seq < p_seqs[cardinality(p_seqs)];
        RETURN added > 0 AND EXISTS (
          SELECT 1 FROM subscriptions s
          WHERE s.status = 'active' AND (s.event_types IS NULL OR s.event_types && p_types));
      END
      $fn$`);
    await q.query(`
      CREATE FUNCTION webhook_claim(p_limit integer, p_token text, p_deliveries text[], p_busy text[], p_lease_ms integer)
      RETURNS jsonb LANGUAGE plpgsql AS $fn$
      DECLARE
        claimed text[];
        answer jsonb := '[]'::jsonb;
        i integer := 0;
        sub_id text;
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        WITH due AS (
          SELECT s.id, s.next_attempt_at FROM subscriptions s
          WHERE s.status = 'active'
            AND s.id <> ALL (p_busy)
            AND (s.lease_expires_at IS NULL OR s.lease_expires_at < now())
            AND (s.next_attempt_at IS NULL OR s.next_attempt_at <= now())
            AND EXISTS (SELECT 1 FROM webhook_events e
                        WHERE e.position > s.bookmark AND (s.event_types IS NULL OR e.type = ANY (s.event_types)))
          ORDER BY s.next_attempt_at NULLS FIRST, s.id
          LIMIT p_limit
          FOR UPDATE OF s SKIP LOCKED),
        leased AS (
          UPDATE subscriptions s SET lease_token = p_token, lease_expires_at = now() + make_interval(secs => p_lease_ms::float8 / 1000)
          FROM due WHERE s.id = due.id
          RETURNING s.id, due.next_attempt_at)
        SELECT array_agg(id ORDER BY next_attempt_at NULLS FIRST, id) INTO claimed FROM leased;
        IF claimed IS NULL THEN
          RETURN answer;
        END IF;
        UPDATE deliveries SET status = 'failed', error = 'interrupted before an answer was recorded; the event will be sent again'
        WHERE subscription_id = ANY (claimed) AND status = 'pending';
        FOREACH sub_id IN ARRAY claimed LOOP
          i := i + 1;
          answer := answer || jsonb_build_array(jsonb_build_object(
            'id', sub_id, 'delivery', p_deliveries[i], 'attempt', webhook_prepare_attempt(sub_id, p_token, p_deliveries[i], p_lease_ms)));
        END LOOP;
        RETURN answer;
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION webhook_claim(integer, text, text[], text[], integer)`);
    await q.query(`DROP FUNCTION webhook_take_in(text, bigint[], text[], text[], text[], text[])`);
  }
}
