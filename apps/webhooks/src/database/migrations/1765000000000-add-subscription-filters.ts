import { MigrationInterface, QueryRunner } from 'typeorm';
import { AddDeliveryFunctions1764800000000 } from './1764800000000-add-delivery-functions';

/**
 * Filters on subscriptions (docs/webhooks.md). `filter` holds the checked filter; `screened_position` the
 * next event the dispatcher found the filter to hold for. The filter is evaluated in the service, by the
 * same evaluator the event log uses, so webhook_prepare_attempt does not evaluate it: for a filtered
 * subscription whose next event is not the screened one it records nothing and answers {"screen": true},
 * and the dispatcher tests the events after the bookmark, moves the bookmark past those the filter drops
 * (no delivery record for them) and marks the first it keeps as screened.
 */
export class AddSubscriptionFilters1765000000000 implements MigrationInterface {
  name = 'AddSubscriptionFilters1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE subscriptions ADD COLUMN filter jsonb NULL, ADD COLUMN screened_position bigint NULL`);
    await q.query(`
      CREATE OR REPLACE FUNCTION webhook_prepare_attempt(p_subscription text, p_token text, p_delivery text, p_lease_ms integer)
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
        IF sub.filter IS NOT NULL AND ev.position IS DISTINCT FROM sub.screened_position THEN
          RETURN jsonb_build_object('screen', true);
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
  }

  async down(q: QueryRunner): Promise<void> {
    const functions = new AddDeliveryFunctions1764800000000();
    await functions.down(q);
    await functions.up(q);
    await q.query(`ALTER TABLE subscriptions DROP COLUMN screened_position, DROP COLUMN filter`);
  }
}
