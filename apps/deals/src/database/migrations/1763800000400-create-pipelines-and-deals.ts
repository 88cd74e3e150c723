import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreatePipelinesAndDeals1763800000400 implements MigrationInterface {
  name = 'CreatePipelinesAndDeals1763800000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pipelines (
        id text PRIMARY KEY,
        name text NOT NULL,
        is_default boolean NOT NULL DEFAULT false,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // At most one default pipeline, whatever the interleaving of writers.
    await q.query(`CREATE UNIQUE INDEX pipelines_one_default ON pipelines (is_default) WHERE is_default`);

    await q.query(`
      CREATE TABLE stages (
        id text PRIMARY KEY,
        pipeline_id text NOT NULL REFERENCES pipelines (id) ON DELETE CASCADE,
        name text NOT NULL,
        type text NOT NULL CHECK (type IN ('open', 'won', 'lost')),
        position integer NOT NULL CHECK (position >= 0),
        color text CHECK (color ~ '^#[0-9a-f]{6}$'),
        probability double precision CHECK (probability >= 0 AND probability <= 1),
        created_at timestamptz NOT NULL DEFAULT now(),
        -- Deferred so a reorder may pass through duplicate positions inside its transaction.
        CONSTRAINT stages_position_unique UNIQUE (pipeline_id, position) DEFERRABLE INITIALLY DEFERRED,
        CONSTRAINT stages_pipeline_id_id UNIQUE (pipeline_id, id)
      )`);
    await q.query(`CREATE UNIQUE INDEX stages_name_unique ON stages (pipeline_id, lower(name))`);

    await q.query(`
      CREATE TABLE deals (
        id text PRIMARY KEY,
        name text NOT NULL,
        pipeline_id text NOT NULL,
        stage_id text NOT NULL,
        contact_id text,
        company_id text,
        value bigint NOT NULL DEFAULT 0 CHECK (value >= 0 AND value <= 9007199254740991),
        currency char(3) NOT NULL DEFAULT 'USD',
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'won', 'lost', 'stalled')),
        expected_close timestamptz,
        owner_id text,
        source text,
        metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        loss_reason text,
        stage_entered_at timestamptz NOT NULL DEFAULT now(),
        last_activity_at timestamptz,
        stale_notified_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- The stage must belong to the deal's pipeline, and a stage holding deals cannot be deleted.
        CONSTRAINT deals_stage_in_pipeline FOREIGN KEY (pipeline_id, stage_id) REFERENCES stages (pipeline_id, id) ON DELETE RESTRICT
      )`);
    await q.query(`CREATE INDEX deals_pipeline_stage ON deals (pipeline_id, stage_id, id)`);
    await q.query(`CREATE INDEX deals_stage ON deals (stage_id)`);
    await q.query(`CREATE INDEX deals_contact ON deals (contact_id, id) WHERE contact_id IS NOT NULL`);
    await q.query(`CREATE INDEX deals_company ON deals (company_id, id) WHERE company_id IS NOT NULL`);
    await q.query(`CREATE INDEX deals_owner ON deals (owner_id, id) WHERE owner_id IS NOT NULL`);
    await q.query(`CREATE INDEX deals_status ON deals (status, id)`);
    await q.query(`CREATE INDEX deals_inactivity ON deals ((COALESCE(last_activity_at, created_at)))`);
    await q.query(`
      CREATE INDEX deals_stale_candidates ON deals ((COALESCE(last_activity_at, created_at)))
        WHERE stale_notified_at IS NULL AND status IN ('open', 'stalled')`);

    await q.query(`
      CREATE TABLE stage_history (
        id text PRIMARY KEY,
        deal_id text NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
        from_stage_id text,
        to_stage_id text NOT NULL,
        changed_at timestamptz NOT NULL DEFAULT now(),
        changed_by text NOT NULL,
        changed_by_key_id text
      )`);
    await q.query(`CREATE INDEX stage_history_deal ON stage_history (deal_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE stage_history`);
    await q.query(`DROP TABLE deals`);
    await q.query(`DROP TABLE stages`);
    await q.query(`DROP TABLE pipelines`);
  }
}
