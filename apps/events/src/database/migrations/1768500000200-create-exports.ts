import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Exports (docs/exports.md): one row per export, and its files cut into pieces kept beside it, so any
 * gateway replica can serve any file through this service. New tables: nothing else is locked.
 */
export class CreateExports1768500000200 implements MigrationInterface {
  name = 'CreateExports1768500000200';

  async up(q: QueryRunner): Promise<void> {
    // New tables lock nothing else; set anyway, as every migration does.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE TABLE exports (
        id text PRIMARY KEY,
        key_id text,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        objects text[] NOT NULL,
        format text NOT NULL,
        request jsonb NOT NULL,
        readable text[],
        as_of bigint,
        progress jsonb NOT NULL DEFAULT '{}',
        files jsonb NOT NULL DEFAULT '[]',
        error jsonb,
        attempt integer NOT NULL DEFAULT 0,
        heartbeat_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        expires_at timestamptz
      )`);
    await q.query(`CREATE INDEX exports_unfinished ON exports (created_at) WHERE status IN ('queued', 'running')`);
    await q.query(`CREATE INDEX exports_unfinished_by_key ON exports (key_id) WHERE status IN ('queued', 'running')`);
    await q.query(`CREATE INDEX exports_expires_at ON exports (expires_at)`);
    await q.query(`
      CREATE TABLE export_pieces (
        export_id text NOT NULL REFERENCES exports (id) ON DELETE CASCADE,
        file text NOT NULL,
        seq integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (export_id, file, seq)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`DROP TABLE export_pieces`);
    await q.query(`DROP TABLE exports`);
  }
}
