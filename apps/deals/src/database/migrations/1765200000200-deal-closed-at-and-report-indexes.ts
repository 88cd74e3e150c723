import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pipeline report (docs/pipeline-report.md) counts deals by when they were won or lost. A status can
 * change without a stage move (PATCH status, batch updates), so the stage history does not know it: deals
 * keep `closed_at`, the instant their status last became won or lost, null while open or stalled.
 *
 * A trigger stamps it in the same statement as every status change, whichever write path makes it
 * (single, batch, import, moves of a whole stage), with the write's own `updated_at` so it matches the
 * stage history entry of a move to a closed stage; a change of stage that keeps the status keeps it.
 *
 * Existing closed deals take the time of the last change entry that set their current status, else the
 * time they entered their stage when that stage closed them, else their last update.
 *
 * Each stage-history row also keeps `stay_started_at`, when the deal entered the stage the row leaves
 * (from_stage_id): the report's time in stage is then read from the rows that end stays, without looking
 * up the row before each. A trigger fills it from the deal's latest row as each row is written (moves of
 * one deal are serialized by its row lock); existing rows take it from the row before them.
 *
 * The indexes serve the report's reads of the stage history: entries into a pipeline's stages within a
 * window, and exits from them (the end of each stay).
 */
export class DealClosedAtAndReportIndexes1765200000200 implements MigrationInterface {
  name = 'DealClosedAtAndReportIndexes1765200000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deals ADD COLUMN closed_at timestamptz`);
    await q.query(
      `UPDATE deals d SET closed_at = COALESCE(
         (SELECT max(c.occurred_at) FROM changes c
           WHERE c.object = 'deals' AND c.record_id = d.id AND c.current ->> 'status' = d.status),
         (SELECT d.stage_entered_at FROM stages s WHERE s.id = d.stage_id AND s.type = d.status),
         d.updated_at)
       WHERE d.status IN ('won', 'lost')`,
    );
    await q.query(
      `CREATE FUNCTION deals_stamp_closed_at() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.status NOT IN ('won', 'lost') THEN
           NEW.closed_at := NULL;
         ELSIF TG_OP = 'INSERT' THEN
           NEW.closed_at := NEW.created_at;
         ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
           NEW.closed_at := CASE WHEN NEW.updated_at IS DISTINCT FROM OLD.updated_at THEN NEW.updated_at ELSE clock_timestamp() END;
         ELSE
           NEW.closed_at := OLD.closed_at;
         END IF;
         RETURN NEW;
       END $$`,
    );
    await q.query(`CREATE TRIGGER deals_closed_at BEFORE INSERT OR UPDATE ON deals FOR EACH ROW EXECUTE FUNCTION deals_stamp_closed_at()`);
    await q.query(`ALTER TABLE stage_history ADD COLUMN stay_started_at timestamptz`);
    await q.query(
      `UPDATE stage_history h SET stay_started_at = p.previous
       FROM (SELECT id, lag(changed_at) OVER (PARTITION BY deal_id ORDER BY changed_at, id) AS previous FROM stage_history) p
       WHERE p.id = h.id AND h.from_stage_id IS NOT NULL`,
    );
    await q.query(
      `CREATE FUNCTION stage_history_stamp_stay() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.from_stage_id IS NOT NULL AND NEW.stay_started_at IS NULL THEN
           NEW.stay_started_at := (SELECT changed_at FROM stage_history WHERE deal_id = NEW.deal_id ORDER BY changed_at DESC, id DESC LIMIT 1);
         END IF;
         RETURN NEW;
       END $$`,
    );
    await q.query(`CREATE TRIGGER stage_history_stay BEFORE INSERT ON stage_history FOR EACH ROW EXECUTE FUNCTION stage_history_stamp_stay()`);
    await q.query(`CREATE INDEX stage_history_deal_changed_at ON stage_history (deal_id, changed_at)`);
    await q.query(`CREATE INDEX deals_pipeline_closed_at ON deals (pipeline_id, closed_at) WHERE closed_at IS NOT NULL`);
    await q.query(`CREATE INDEX stage_history_to_stage ON stage_history (to_stage_id, changed_at)`);
    await q.query(
      `CREATE INDEX stage_history_from_stage ON stage_history (from_stage_id, changed_at) INCLUDE (stay_started_at) WHERE from_stage_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX stage_history_from_stage`);
    await q.query(`DROP INDEX stage_history_to_stage`);
    await q.query(`DROP INDEX deals_pipeline_closed_at`);
    await q.query(`DROP INDEX stage_history_deal_changed_at`);
    await q.query(`DROP TRIGGER stage_history_stay ON stage_history`);
    await q.query(`DROP FUNCTION stage_history_stamp_stay()`);
    await q.query(`ALTER TABLE stage_history DROP COLUMN stay_started_at`);
    await q.query(`DROP TRIGGER deals_closed_at ON deals`);
    await q.query(`DROP FUNCTION deals_stamp_closed_at()`);
    await q.query(`ALTER TABLE deals DROP COLUMN closed_at`);
  }
}
