import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `traceparent` an event arrived with, so each delivery of it joins the trace of the change. */
export class AddEventTraceContext1764200000100 implements MigrationInterface {
  name = 'AddEventTraceContext1764200000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events ADD COLUMN trace_context text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP COLUMN trace_context`);
  }
}
