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
    await q.query(`CREATE INDEX deals_pipeline_closed_at ON deals (pipeline_id, closed_at) WHERE closed_at IS NOT NULL`);
    await q.query(`CREATE INDEX stage_history_to_stage ON stage_history (to_stage_id, changed_at)`);
    await q.query(`CREATE INDEX stage_history_from_stage ON stage_history (from_stage_id, changed_at) WHERE from_stage_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX stage_history_from_stage`);
    await q.query(`DROP INDEX stage_history_to_stage`);
    await q.query(`DROP INDEX deals_pipeline_closed_at`);
    await q.query(`DROP TRIGGER deals_closed_at ON deals`);
    await q.query(`DROP FUNCTION deals_stamp_closed_at()`);
    await q.query(`ALTER TABLE deals DROP COLUMN closed_at`);
  }
}
