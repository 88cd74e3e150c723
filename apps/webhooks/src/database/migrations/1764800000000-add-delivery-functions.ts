import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two steps every delivered event takes, each as one function call: one round trip instead of six
 * (preparing an attempt) and nine (recording a success and preparing the next). A subscription's events
 * go out one at a time, so these round trips, not the sends, bounded how fast a busy subscription could
 * be served and made the delivery tail under a steady write load. Both commit without waiting for the
 * WAL flush, as the dispatcher's other bookkeeping does (see dispatcher.service.ts).
 *
 * webhook_prepare_attempt: for a subscription this replica leases, active and due, the next event after
 * its bookmark, recorded as a pending attempt (numbered after the event's earlier attempts); the
 * subscription's URL and secrets and the event, as jsonb, or NULL when there is nothing to send.
 *
 * webhook_record_success: records a successful attempt and moves the bookmark past its event, unless the
 * lease was lost (`go_on` false) or the cursor was replayed meanwhile (nothing moves); then, given the id
 * for it, prepares the next attempt in the same transaction (`next`).
 */
export class AddDeliveryFunctions1764800000000 implements MigrationInterface {
  name = 'AddDeliveryFunctions1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION webhook_prepare_attempt(p_subscription text, p_token text, p_delivery text, p_lease_ms integer)
      RETURNS jsonb LANGUAGE plpgsql AS $fn$
      DECLARE
        sub subscriptions%ROWTYPE;
        ev record;
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        SELECT * INTO sub FROM subscriptions WHERE id = p_subscription AND lease_token = p_token FOR UPDATE;
        IF NOT FOUND OR sub.status <> 'active' OR NOT coalesce(sub.next_attempt_at <= now(), true) THEN
          RETURN NULL;
        END IF;
        SELECT e.position, e.id, e.body, e.trace_context INTO ev FROM webhook_events e
        WHERE e.position > sub.bookmark AND (sub.event_types IS NULL OR e.type = ANY (sub.event_types))
        ORDER BY e.position LIMIT 1;
        IF NOT FOUND THEN
          RETURN NULL;
        END IF;
        UPDATE subscriptions
        SET retry_position = ev.position,
            retry_count = CASE WHEN sub.retry_position = ev.position THEN sub.retry_count ELSE 0 END,
            lease_expires_at = now() + make_interval(secs => p_lease_ms::float8 / 1000)
        WHERE id = p_subscription;
        INSERT INTO deliveries (id, subscription_id, event_id, attempt, status)
        SELECT p_delivery, p_subscription, ev.id, coalesce(max(d.attempt), 0) + 1, 'pending'
        FROM deliveries d WHERE d.subscription_id = p_subscription AND d.event_id = ev.id;
        RETURN jsonb_build_object(
          'url', sub.url, 'secret', sub.secret, 'previous_secret', sub.previous_secret,
          'previous_valid', coalesce(sub.previous_secret_expires_at > now(), false), 'cursor_revision', sub.cursor_revision,
          'position', ev.position, 'event_id', ev.id, 'body', ev.body, 'trace_context', ev.trace_context);
      END
      $fn$`);
    await q.query(`
      CREATE FUNCTION webhook_record_success(p_delivery text, p_subscription text, p_token text, p_cursor_revision integer, p_position bigint,
                                             p_http_status integer, p_duration_ms integer, p_next_delivery text, p_lease_ms integer)
      RETURNS jsonb LANGUAGE plpgsql AS $fn$
      DECLARE
        sub subscriptions%ROWTYPE;
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        UPDATE deliveries SET status = 'success', http_status = p_http_status, error = NULL, duration_ms = p_duration_ms WHERE id = p_delivery;
        SELECT * INTO sub FROM subscriptions WHERE id = p_subscription AND lease_token = p_token FOR UPDATE;
        IF NOT FOUND THEN
          RETURN jsonb_build_object('go_on', false);
        END IF;
        IF sub.cursor_revision <> p_cursor_revision THEN
          RETURN jsonb_build_object('go_on', true);
        END IF;
        UPDATE subscriptions
        SET bookmark = p_position, retry_position = NULL, retry_count = 0, next_attempt_at = NULL, failure_count = 0, last_delivered_at = now()
        WHERE id = p_subscription;
        IF p_next_delivery IS NULL THEN
          RETURN jsonb_build_object('go_on', true);
        END IF;
        RETURN jsonb_build_object('go_on', true, 'next', webhook_prepare_attempt(p_subscription, p_token, p_next_delivery, p_lease_ms));
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION webhook_record_success(text, text, text, integer, bigint, integer, integer, text, integer)`);
    await q.query(`DROP FUNCTION webhook_prepare_attempt(text, text, text, integer)`);
  }
}
