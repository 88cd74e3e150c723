/**
 * The statements of the pipeline report (docs/pipeline-report.md), kept apart from the service so the
 * benchmark (bench/pipeline-report.ts) runs exactly these beside the route.
 */

/** Deals that still count as open: a stalled deal has not been won or lost. */
const OPEN = `status IN ('open', 'stalled')`;

/**
 * Settings for the report's transaction (SET LOCAL), in one statement. JIT: compiling these short
 * aggregations costs more than it saves (it once doubled the report's time). work_mem: the sort of the
 * stays' durations for their percentiles (300,000 at 1,000,000 history rows) stays in memory.
 * random_page_cost: every statement reads a covering index whose pages are cached; at the default 4 the
 * planner read all of a pipeline's deals sequentially instead, two to three times slower (EXPLAIN at
 * 200,000 deals, docs/benchmarks.md).
 */
export const REPORT_SETTING_VALUES: Record<string, string> = { jit: 'off', work_mem: '64MB', random_page_cost: '1.1' };
export const REPORT_SETTINGS = `SELECT ${Object.entries(REPORT_SETTING_VALUES)
  .map(([name, value]) => `set_config('${name}', '${value}', true)`)
  .join(', ')}`;

/** What a report past its budget (QueryBudget) is told to change. */
export const REPORT_HINT = 'Ask for a shorter window (from and to closer together), or try again when the pipeline is less busy.';

export interface ReportWindow {
  from: Date;
  to: Date;
}

/** What the report's statements read for one pipeline; the bench runs the same statements (bench/pipeline-report.ts). */
export interface ReportInput {
  pipelineId: string;
  window: ReportWindow;
  timeZone: string;
  /** Only deals in this currency count; null counts every deal (the pipeline holds one currency at most). */
  currency: string | null;
  stages: Array<{ id: string; type: string; position: number; probability: number }>;
}

export interface Statement {
  text: string;
  params: unknown[];
}

/** Open (or stalled) deals and their value per stage and currency: an index-only scan of `deals_pipeline_open`. */
export function openByStage(pipelineId: string): Statement {
  return {
    text: `SELECT stage_id, currency, count(*)::int AS open_count, sum(value)::text AS open_value
           FROM deals WHERE pipeline_id = $1 AND ${OPEN} GROUP BY stage_id, currency`,
    params: [pipelineId],
  };
}

/** The lowest and highest currency of the pipeline's deals, closed ones included: two probes of `deals_pipeline_currency`. */
export function currencyRange(pipelineId: string): Statement {
  return { text: `SELECT min(currency) AS lo, max(currency) AS hi FROM deals WHERE pipeline_id = $1`, params: [pipelineId] };
}

/** Every currency the pipeline's deals hold, for the answer that they mix currencies. */
export function currenciesHeld(pipelineId: string): Statement {
  return { text: `SELECT DISTINCT currency FROM deals WHERE pipeline_id = $1 ORDER BY 1`, params: [pipelineId] };
}

/** `AND <alias>.currency = $n` when the report names a currency. */
function currencyCondition(input: ReportInput, alias: string, params: unknown[]): string {
  if (input.currency === null) return '';
  params.push(input.currency);
  return ` AND ${alias}.currency = $${params.length}`;
}

/** Deals won or lost in the window: closed_at is when their status last became won or lost. */
export function closedInWindow(input: ReportInput): Statement {
  const params: unknown[] = [input.pipelineId, input.window.from, input.window.to];
  const text = `SELECT (count(*) FILTER (WHERE d.status = 'won'))::int AS won_count,
                       COALESCE(sum(d.value) FILTER (WHERE d.status = 'won'), 0)::text AS won_value,
                       (count(*) FILTER (WHERE d.status = 'lost'))::int AS lost_count,
                       (avg(extract(epoch FROM d.closed_at - d.created_at)) FILTER (WHERE d.status = 'won'))::float8 / 86400 AS avg_cycle_days
                FROM deals d WHERE d.pipeline_id = $1 AND d.closed_at >= $2 AND d.closed_at < $3${currencyCondition(input, 'd', params)}`;
  return { text, params };
}

/** Open deals with an expected close, by its month in the report's zone and by stage (for the stage's probability). */
export function forecastByMonth(input: ReportInput): Statement {
  const params: unknown[] = [input.pipelineId, input.timeZone];
  const text = `SELECT to_char(d.expected_close AT TIME ZONE $2, 'YYYY-MM') AS month, d.stage_id, count(*)::int AS count, sum(d.value)::text AS value
                FROM deals d WHERE d.pipeline_id = $1 AND d.${OPEN} AND d.expected_close IS NOT NULL${currencyCondition(input, 'd', params)}
                GROUP BY 1, 2 ORDER BY 1, 2`;
  return { text, params };
}

/**
 * Per stage, the deals that entered it in the window (their first entry there counts) and, of those, the
 * ones that have since entered an open stage of higher position or a won stage of the pipeline. Each
 * history row keeps the stages its deal entered after it and when the deal last entered the same stage
 * before it (both maintained by a trigger, migration 1765300000100), so this is one range scan of the
 * entries in the window: the first entry in the window is the one with no entry into the stage since
 * `from` before it, and it advanced when a stage it later entered is ahead of it by today's positions.
 */
export function enteredAndAdvanced(input: ReportInput): Statement {
  const params: unknown[] = [
    input.stages.map((s) => s.id),
    input.stages.map((s) => s.type),
    input.stages.map((s) => s.position),
    input.window.from,
    input.window.to,
  ];
  const join = input.currency === null ? '' : ` JOIN deals d ON d.id = h.deal_id${currencyCondition(input, 'd', params)}`;
  // The entries are counted per stage and set of later stages first (few such sets), then judged against
  // the stages ahead of each, so no per-row work is left but the count.
  const text = `WITH st AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) AS s(id, type, position)),
                     ahead AS MATERIALIZED (SELECT s.id, ARRAY(SELECT o.id FROM st o WHERE o.type = 'won' OR (o.type = 'open' AND o.position > s.position)) AS ids FROM st s),
                     entries AS (SELECT h.to_stage_id AS stage_id, h.later_stage_ids AS later, count(*) AS n
                                 FROM stage_history h${join}
                                 WHERE h.to_stage_id = ANY($1::text[]) AND h.changed_at >= $4 AND h.changed_at < $5
                                   AND (h.previous_entry_at IS NULL OR h.previous_entry_at < $4)
                                 GROUP BY 1, 2)
                SELECT e.stage_id, sum(e.n)::int AS entered, coalesce(sum(e.n) FILTER (WHERE e.later && a.ids), 0)::int AS advanced
                FROM entries e JOIN ahead a ON a.id = e.stage_id GROUP BY 1`;
  return { text, params };
}

/**
 * Percentiles of the stays in each stage that ended in the window: a row that leaves a stage keeps the
 * length of the stay it ends (stay_days, stamped when it is written, migration 1765500000100), so this is
 * an index-only range scan of `stage_history_from_stage` and the sort `percentile_cont` needs.
 */
export function daysInStage(input: ReportInput): Statement {
  const params: unknown[] = [input.stages.map((s) => s.id), input.window.from, input.window.to];
  const join = input.currency === null ? '' : ` JOIN deals d ON d.id = x.deal_id${currencyCondition(input, 'd', params)}`;
  const text = `SELECT x.from_stage_id AS stage_id, percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY x.stay_days) AS days
                FROM stage_history x${join}
                WHERE x.from_stage_id = ANY($1::text[]) AND x.changed_at >= $2 AND x.changed_at < $3 AND x.stay_days IS NOT NULL
                GROUP BY 1`;
  return { text, params };
}
