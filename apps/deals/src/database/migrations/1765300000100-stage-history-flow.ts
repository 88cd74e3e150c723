import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pipeline report's `entered` and `advanced` (docs/pipeline-report.md) looked at each deal's whole
 * history from the window's start: a window over every history row since `from`, then a sort for the first
 * entry per deal and stage. At 1,000,000 history rows that took seconds. Each row now keeps what those
 * figures need, so they become one range scan of the entries in the window:
 *
 * - `later_stage_ids`: the distinct stages the deal entered after this row. Stage ids, not positions or a
 *   yes/no: whether a later stage is "ahead" depends on the stages' current positions and types, which can
 *   change; the report compares against them when it runs.
 * - `previous_entry_at`: when the deal last entered the same stage before this row (null for its first
 *   entry there), so "the first entry in the window" is `previous_entry_at IS NULL OR previous_entry_at < from`.
 *
 * "After" is the report's order, (changed_at, id). A statement-level trigger recomputes both for every row
 * of each deal an insert or a delete touched, in the same transaction, whatever the write path (single
 * moves, batches, imports, moving a deleted stage's deals); a deal holds a handful of rows, so that is an
 * index look-up per deal. Rows are only deleted with their deal (ON DELETE CASCADE), which leaves nothing
 * to recompute, but the trigger covers deletes all the same. Existing rows are filled by the same statement.
 */
export class StageHistoryFlow1765300000100 implements MigrationInterface {
  name = 'StageHistoryFlow1765300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE stage_history ADD COLUMN later_stage_ids text[] NOT NULL DEFAULT '{}', ADD COLUMN previous_entry_at timestamptz`);
    await q.query(refreshFlow('TRUE'));
    await q.query(
      // The schema is the migration's (search_path), not the writer's: a session with another search_path
      // (a script, psql) writing to the table must still reach it.
      `CREATE FUNCTION stage_history_refresh_flow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
       BEGIN
         ${refreshFlow('h.deal_id IN (SELECT deal_id FROM touched)')};
         RETURN NULL;
       END $$`,
    );
    // The same holds for the trigger that stamps stay_started_at, which named the table unqualified too.
    await q.query(`ALTER FUNCTION stage_history_stamp_stay() SET search_path FROM CURRENT`);
    for (const [op, table] of [
      ['INSERT', 'NEW'],
      ['DELETE', 'OLD'],
    ]) {
      await q.query(
        `CREATE TRIGGER stage_history_flow_${op.toLowerCase()} AFTER ${op} ON stage_history REFERENCING ${table} TABLE AS touched
         FOR EACH STATEMENT EXECUTE FUNCTION stage_history_refresh_flow()`,
      );
    }
    // Entries into a pipeline's stages in a window, with what the report reads of each: an index-only scan.
    await q.query(`DROP INDEX stage_history_to_stage`);
    await q.query(`CREATE INDEX stage_history_to_stage ON stage_history (to_stage_id, changed_at) INCLUDE (previous_entry_at, later_stage_ids)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX stage_history_to_stage`);
    await q.query(`CREATE INDEX stage_history_to_stage ON stage_history (to_stage_id, changed_at)`);
    await q.query(`DROP TRIGGER stage_history_flow_delete ON stage_history`);
    await q.query(`DROP TRIGGER stage_history_flow_insert ON stage_history`);
    await q.query(`DROP FUNCTION stage_history_refresh_flow()`);
    await q.query(`ALTER FUNCTION stage_history_stamp_stay() RESET search_path`);
    await q.query(`ALTER TABLE stage_history DROP COLUMN later_stage_ids, DROP COLUMN previous_entry_at`);
  }
}

/**
 * Recomputes `later_stage_ids` and `previous_entry_at` of every row of the deals `scope` selects (a
 * condition on `h`), writing only the rows whose values change. One pass per deal: the rows after each
 * row, and the previous entry into the same stage, are windows over the deal's rows in (changed_at, id)
 * order; a deal holds a handful of rows, so the arrays stay short.
 */
export function refreshFlow(scope: string): string {
  return `UPDATE stage_history t SET later_stage_ids = f.later_stage_ids, previous_entry_at = f.previous_entry_at
          FROM (SELECT w.id, ARRAY(SELECT DISTINCT s FROM unnest(w.later) AS s ORDER BY 1) AS later_stage_ids, w.previous_entry_at
                FROM (SELECT h.id,
                             array_agg(h.to_stage_id) OVER (PARTITION BY h.deal_id ORDER BY h.changed_at, h.id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS later,
                             lag(h.changed_at) OVER (PARTITION BY h.deal_id, h.to_stage_id ORDER BY h.changed_at, h.id) AS previous_entry_at
                      FROM stage_history h WHERE ${scope}) AS w) AS f
          WHERE t.id = f.id AND (t.later_stage_ids, t.previous_entry_at) IS DISTINCT FROM (f.later_stage_ids, f.previous_entry_at)`;
}
