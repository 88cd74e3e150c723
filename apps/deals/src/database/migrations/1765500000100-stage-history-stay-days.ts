import { MigrationInterface, QueryRunner } from 'typeorm';

/** A stay's length in days, exactly as the pipeline report computed it from the two instants. */
const STAY_DAYS = `extract(epoch FROM changed_at - stay_started_at)::float8 / 86400`;

/**
 * The pipeline report's days in stage (docs/pipeline-report.md) read every stay that ended in the window
 * and computed its length from `changed_at - stay_started_at` per row (a numeric `extract`) before sorting
 * the lengths for `percentile_cont`: at 1,000,000 history rows about 300,000 stays per report. Each row that
 * ends a stay now keeps its length, `stay_days`, stamped by the row trigger that already stamps
 * `stay_started_at` (in the writing transaction, on every write path, and again should either instant be
 * updated), and the stays' index carries it, so the report reads float8 values straight from an index-only
 * range scan and only sorts them. The value is the same float8 expression the report used, so the
 * percentiles are unchanged to the bit.
 */
export class StageHistoryStayDays1765500000100 implements MigrationInterface {
  name = 'StageHistoryStayDays1765500000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stage_history ADD COLUMN stay_days float8`);
    await q.query(`UPDATE stage_history SET stay_days = ${STAY_DAYS} WHERE stay_started_at IS NOT NULL`);
    await q.query(stampStay(true));
    await q.query(`DROP TRIGGER stage_history_stay ON stage_history`);
    // Only writes of the two instants recompute the length: the flow trigger's updates of other columns do not fire it.
    await q.query(
      `CREATE TRIGGER stage_history_stay BEFORE INSERT OR UPDATE OF changed_at, stay_started_at ON stage_history FOR EACH ROW EXECUTE FUNCTION stage_history_stamp_stay()`,
    );
    await q.query(`DROP INDEX stage_history_from_stage`);
    await q.query(`CREATE INDEX stage_history_from_stage ON stage_history (from_stage_id, changed_at) INCLUDE (stay_days) WHERE from_stage_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX stage_history_from_stage`);
    await q.query(
      `CREATE INDEX stage_history_from_stage ON stage_history (from_stage_id, changed_at) INCLUDE (stay_started_at) WHERE from_stage_id IS NOT NULL`,
    );
    await q.query(`DROP TRIGGER stage_history_stay ON stage_history`);
    await q.query(`CREATE TRIGGER stage_history_stay BEFORE INSERT ON stage_history FOR EACH ROW EXECUTE FUNCTION stage_history_stamp_stay()`);
    await q.query(stampStay(false));
    await q.query(`ALTER TABLE stage_history DROP COLUMN stay_days`);
  }
}

/**
 * The row trigger's function: stamps `stay_started_at` on insert (the deal's previous row) and, `withDays`,
 * the stay's length. Without it, the function as it was before this migration (its trigger fires on insert only).
 */
function stampStay(withDays: boolean): string {
  return `CREATE OR REPLACE FUNCTION stage_history_stamp_stay() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
          BEGIN
            IF TG_OP = 'INSERT' AND NEW.from_stage_id IS NOT NULL AND NEW.stay_started_at IS NULL THEN
              NEW.stay_started_at := (SELECT changed_at FROM stage_history WHERE deal_id = NEW.deal_id ORDER BY changed_at DESC, id DESC LIMIT 1);
            END IF;
            ${withDays ? 'NEW.stay_days := extract(epoch FROM NEW.changed_at - NEW.stay_started_at)::float8 / 86400;' : ''}
            RETURN NEW;
          END $$`;
}
