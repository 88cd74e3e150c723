/**
 * The statements of the pipeline report (docs/pipeline-report.md), kept apart from the service so the
 * benchmark (bench/pipeline-report.ts) runs exactly these beside the route.
 */

/** Deals that still count as open: a stalled deal has not been won or lost. */
const OPEN = `status IN ('open', 'stalled')`;

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

/** Open deals and their value per stage and currency; the currencies seen are every deal's, closed ones included. */
export function openByStage(pipelineId: string): Statement {
  return {
    text: `SELECT stage_id, currency, (count(*) FILTER (WHERE ${OPEN}))::int AS open_count,
                  COALESCE(sum(value) FILTER (WHERE ${OPEN}), 0)::text AS open_value
           FROM deals WHERE pipeline_id = $1 GROUP BY stage_id, currency`,
    params: [pipelineId],
  };
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
 * ones that have since entered an open stage of higher position or a won stage of the pipeline. One pass
 * over the history from `from` on: each row learns the best stage its deal entered after it (a window over
 * the deal's later rows, won ranking above every open stage), so no entry looks up its deal's rows.
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
  const text = `WITH st AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) AS s(id, type, position)),
                     scored AS (SELECT h.deal_id, h.to_stage_id, h.changed_at, s.position,
                                       max(CASE s.type WHEN 'won' THEN 2147483647 WHEN 'open' THEN s.position ELSE -1 END)
                                         OVER (PARTITION BY h.deal_id ORDER BY h.changed_at, h.id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS best_after
                                FROM stage_history h JOIN st s ON s.id = h.to_stage_id${join}
                                WHERE h.to_stage_id = ANY($1::text[]) AND h.changed_at >= $4),
                     entries AS (SELECT DISTINCT ON (deal_id, to_stage_id) to_stage_id, position, best_after
                                 FROM scored WHERE changed_at < $5 ORDER BY deal_id, to_stage_id, changed_at)
                SELECT to_stage_id AS stage_id, count(*)::int AS entered, (count(*) FILTER (WHERE best_after > position))::int AS advanced
                FROM entries GROUP BY 1`;
  return { text, params };
}

/**
 * Percentiles of the stays in each stage that ended in the window: a row that leaves a stage holds when
 * the deal had entered it (stay_started_at).
 */
export function daysInStage(input: ReportInput): Statement {
  const params: unknown[] = [input.stages.map((s) => s.id), input.window.from, input.window.to];
  const join = input.currency === null ? '' : ` JOIN deals d ON d.id = x.deal_id${currencyCondition(input, 'd', params)}`;
  const text = `SELECT x.from_stage_id AS stage_id,
                       percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM x.changed_at - x.stay_started_at)::float8 / 86400) AS days
                FROM stage_history x${join}
                WHERE x.from_stage_id = ANY($1::text[]) AND x.changed_at >= $2 AND x.changed_at < $3 AND x.stay_started_at IS NOT NULL
                GROUP BY 1`;
  return { text, params };
}
