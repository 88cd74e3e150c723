import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateIdempotencyKeys1763800000200 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1763800000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        api_key_id text NOT NULL,
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        locked_until timestamptz,
        response_status integer,
        response_type text,
        response_body text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (api_key_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
