import { MigrationInterface, QueryRunner } from 'typeorm';
import { AddIntakeAndClaimFunctions1764900000000 } from './1764900000000-add-intake-and-claim-functions';

/**
 * webhook_claim leases a filtered subscription only when it has an event to send: one the filter was found
 * to hold for (screened_position after the bookmark, which also covers a retry under way), or a lease that
 * ran out (a turn cut short, possibly mid-screen, whose pending attempt must be marked failed). The rest
 * are screened together by the dispatcher (EventScreen.screenWaiting) before it claims, instead of each
 * taking a slot to be claimed, screened and released on its own. Otherwise as before.
 */
export class ClaimScreenedSubscriptions1765100000000 implements MigrationInterface {
  name = 'ClaimScreenedSubscriptions1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION webhook_claim(p_limit integer, p_token text, p_deliveries text[], p_busy text[], p_lease_ms integer)
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
            AND (s.filter IS NULL OR s.screened_position > s.bookmark OR s.lease_token IS NOT NULL)
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
    const functions = new AddIntakeAndClaimFunctions1764900000000();
    await functions.down(q);
    await functions.up(q);
  }
}
