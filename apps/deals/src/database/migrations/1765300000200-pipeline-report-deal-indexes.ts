import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pipeline report's reads of a pipeline's deals (docs/pipeline-report.md), each an index-only scan of
 * the deals it needs rather than a scan of all the pipeline's deals (200,000 in the benchmark):
 *
 * - the open (or stalled) deals by stage and currency, and the forecast of those with an expected close:
 *   a partial index over open deals only, which stay a minority as a pipeline ages;
 * - whether the pipeline's deals hold more than one currency: min and max of `currency`, two index probes;
 * - deals won or lost in the window: the existing `(pipeline_id, closed_at)` index, now carrying what the
 *   figures read (status, value, currency, created_at).
 */
export class PipelineReportDealIndexes1765300000200 implements MigrationInterface {
  name = 'PipelineReportDealIndexes1765300000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX deals_pipeline_open ON deals (pipeline_id, stage_id, currency) INCLUDE (value, expected_close) WHERE status IN ('open', 'stalled')`,
    );
    await q.query(`CREATE INDEX deals_pipeline_currency ON deals (pipeline_id, currency)`);
    await q.query(`DROP INDEX deals_pipeline_closed_at`);
    await q.query(
      `CREATE INDEX deals_pipeline_closed_at ON deals (pipeline_id, closed_at) INCLUDE (status, value, currency, created_at) WHERE closed_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deals_pipeline_closed_at`);
    await q.query(`CREATE INDEX deals_pipeline_closed_at ON deals (pipeline_id, closed_at) WHERE closed_at IS NOT NULL`);
    await q.query(`DROP INDEX deals_pipeline_currency`);
    await q.query(`DROP INDEX deals_pipeline_open`);
  }
}
