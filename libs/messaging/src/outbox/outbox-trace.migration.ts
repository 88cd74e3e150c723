import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `traceparent` of the span that recorded an event, so the relay's publish continues its trace. */
export class AddOutboxTraceContext1764200000000 implements MigrationInterface {
  name = 'AddOutboxTraceContext1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox ADD COLUMN trace_context text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox DROP COLUMN trace_context`);
  }
}
