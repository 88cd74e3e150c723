import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWebhooks1763800000600 implements MigrationInterface {
  name = 'CreateWebhooks1763800000600';

  async up(q: QueryRunner): Promise<void> {
    // The service's own copy of the event log; `position` is the order in which events were consumed.
    await q.query(`
      CREATE TABLE webhook_events (
        position bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        type text NOT NULL,
        body text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_events_type_position ON webhook_events (type, position)`);

    await q.query(`
      CREATE TABLE subscriptions (
        id text PRIMARY KEY,
        name text NOT NULL,
        url text NOT NULL,
        secret text NOT NULL,
        event_types text[],
        status text NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
        failure_count integer NOT NULL DEFAULT 0 CHECK (failure_count >= 0),
        last_delivered_at timestamptz,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        bookmark bigint NOT NULL DEFAULT 0,
        cursor_revision integer NOT NULL DEFAULT 0,
        retry_position bigint,
        retry_count integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        lease_token text,
        lease_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX subscriptions_status_id ON subscriptions (status, id)`);

    await q.query(`
      CREATE TABLE deliveries (
        id text PRIMARY KEY,
        subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
        event_id text NOT NULL,
        attempt integer NOT NULL CHECK (attempt >= 1),
        status text NOT NULL CHECK (status IN ('success', 'failed', 'pending')),
        http_status integer,
        error text,
        duration_ms integer,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX deliveries_subscription_id ON deliveries (subscription_id, id)`);
    await q.query(`CREATE INDEX deliveries_subscription_event ON deliveries (subscription_id, event_id, attempt)`);
    await q.query(`CREATE INDEX deliveries_pending ON deliveries (subscription_id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE deliveries`);
    await q.query(`DROP TABLE subscriptions`);
    await q.query(`DROP TABLE webhook_events`);
  }
}
