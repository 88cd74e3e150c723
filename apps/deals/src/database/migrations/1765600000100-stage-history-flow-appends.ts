import { MigrationInterface, QueryRunner } from 'typeorm';
import { refreshFlow } from './1765300000100-stage-history-flow';

/**
 * The flow columns' trigger (see StageHistoryFlow1765300000100) recomputed every row of each deal an insert
 * touched, with a window that, for each row, gathers every row after it: quadratic in the deal's history.
 * That was written for "a deal holds a handful of rows"; a deal moved back and forth a few thousand times
 * (a script toggling a stage, a bench) made each move cost PostgreSQL tens of milliseconds and more with
 * every move, all of it while the deal's row lock is held, so concurrent moves of that deal queued behind it
 * (32 clients moving one deal: 220 moves a second before the trigger, 10 after 5,000 moves).
 *
 * Almost every insert is a move as it happens: one new row per deal, after all the deal's other rows. For
 * such a row with stage s, and p the deal's last earlier entry into s:
 * - the new row's `later_stage_ids` stays empty and its `previous_entry_at` is p's `changed_at`;
 * - rows before p already list s (p came after them); p and the rows after it do not, and gain it.
 * So p is one step back in a new index on (deal_id, to_stage_id, changed_at, id), and the update reads the
 * range of (deal_id, changed_at) from p on, whatever the length of the history. The new rows' part is
 * MATERIALIZED and the range bound stands alone in the condition: otherwise the planner, expecting a handful
 * of rows per deal, read all of them. Anything else (several rows of one deal in one statement, a row dated
 * before others of its deal, deletes) is recomputed whole, as before. The stored values are the same either
 * way (`pipeline-report-flow.spec.ts` compares every row with its deal's rows after each kind of write).
 */
export class StageHistoryFlowAppends1765600000100 implements MigrationInterface {
  name = 'StageHistoryFlowAppends1765600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX stage_history_deal_stage ON stage_history (deal_id, to_stage_id, changed_at, id)`);
    await q.query(
      `CREATE OR REPLACE FUNCTION stage_history_refresh_flow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
       BEGIN
         IF TG_OP = 'INSERT' THEN
           WITH entered AS MATERIALIZED (
             SELECT n.id, n.deal_id, n.to_stage_id, p.changed_at AS p_at, p.id AS p_id
             FROM touched n
             LEFT JOIN LATERAL (SELECT h.changed_at, h.id FROM stage_history h
                                WHERE h.deal_id = n.deal_id AND h.to_stage_id = n.to_stage_id AND h.id <> n.id
                                ORDER BY h.changed_at DESC, h.id DESC LIMIT 1) p ON TRUE
             WHERE ${APPENDED('n')})
           UPDATE stage_history t
           SET previous_entry_at = CASE WHEN t.id = e.id THEN e.p_at ELSE t.previous_entry_at END,
               later_stage_ids = CASE WHEN t.id = e.id THEN t.later_stage_ids
                                      ELSE ARRAY(SELECT DISTINCT s FROM unnest(t.later_stage_ids || e.to_stage_id) AS s ORDER BY 1) END
           FROM entered e
           WHERE t.deal_id = e.deal_id
             AND t.changed_at >= COALESCE(e.p_at, '-infinity') AND (e.p_at IS NULL OR (t.changed_at, t.id) >= (e.p_at, e.p_id))
             AND CASE WHEN t.id = e.id THEN e.p_at IS NOT NULL ELSE NOT (e.to_stage_id = ANY (t.later_stage_ids)) END;
           ${refreshFlow(`h.deal_id IN (SELECT n.deal_id FROM touched n WHERE NOT (${APPENDED('n')}))`)};
         ELSE
           ${refreshFlow('h.deal_id IN (SELECT deal_id FROM touched)')};
         END IF;
         RETURN NULL;
       END $$`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE OR REPLACE FUNCTION stage_history_refresh_flow() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
       BEGIN
         ${refreshFlow('h.deal_id IN (SELECT deal_id FROM touched)')};
         RETURN NULL;
       END $$`,
    );
    await q.query(`DROP INDEX stage_history_deal_stage`);
  }
}

/** The new row `n` is its deal's only one in the statement and comes after every other row of the deal. */
const APPENDED = (n: string) =>
  `NOT EXISTS (SELECT 1 FROM touched o WHERE o.deal_id = ${n}.deal_id AND o.id <> ${n}.id)
   AND NOT EXISTS (SELECT 1 FROM stage_history l WHERE l.deal_id = ${n}.deal_id AND l.changed_at >= ${n}.changed_at
                   AND (l.changed_at, l.id) > (${n}.changed_at, ${n}.id))`;
