import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events a consumer of this service could not handle within its attempts, kept with the error so the
 * consumer can carry on and an operator can look at them and ask for a retry (`npm run dead-events`).
 */
export class CreateDeadEvents1763900000000 implements MigrationInterface {
  name = 'CreateDeadEvents1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dead_events (
        id bigserial PRIMARY KEY,
        consumer text NOT NULL,
        event_id text NOT NULL,
        event_type text NOT NULL,
        stream_seq bigint,
        event jsonb NOT NULL,
        error text NOT NULL,
        attempts integer NOT NULL CHECK (attempts > 0),
        parked_at timestamptz NOT NULL DEFAULT now(),
        retry_requested_at timestamptz,
        CONSTRAINT dead_events_consumer_event_unique UNIQUE (consumer, event_id)
      )`);
    await q.query(`CREATE INDEX dead_events_retry_idx ON dead_events (id) WHERE retry_requested_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dead_events`);
  }
}
