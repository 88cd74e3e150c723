import { MigrationInterface, QueryRunner } from 'typeorm';

/** Bulk import jobs and their staged rows; a row is deleted in the transaction that applies it. */
export class CreateImports1764300000200 implements MigrationInterface {
  name = 'CreateImports1764300000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE imports (
        id text PRIMARY KEY,
        object text NOT NULL CHECK (object IN ('contacts', 'companies', 'deals')),
        format text NOT NULL CHECK (format IN ('csv', 'ndjson')),
        status text NOT NULL CHECK (status IN ('receiving', 'queued', 'running', 'completed', 'failed')),
        request_context jsonb NOT NULL,
        total integer NOT NULL DEFAULT 0,
        next_seq integer NOT NULL DEFAULT 0,
        created integer NOT NULL DEFAULT 0,
        updated integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        errors jsonb NOT NULL DEFAULT '[]'::jsonb,
        failure_reason text,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX imports_pending ON imports (id) WHERE status IN ('queued', 'running')`);
    await q.query(`
      CREATE TABLE import_rows (
        import_id text NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        line integer NOT NULL,
        "values" jsonb,
        error jsonb,
        PRIMARY KEY (import_id, seq)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE import_rows`);
    await q.query(`DROP TABLE imports`);
  }
}
