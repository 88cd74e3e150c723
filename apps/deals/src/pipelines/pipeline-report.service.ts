import { DomainError, IdPrefix, isId } from '@crm/common';
import { ForecastMonthView, PipelineReportQuery, PipelineReportView, REPORT_DEFAULT_DAYS, REPORT_MAX_DAYS, StageReportView } from '@crm/contracts';
import { QueryBudget, RunStatement } from '@crm/records';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';
import {
  closedInWindow,
  currenciesHeld,
  currencyRange,
  daysInStage,
  enteredAndAdvanced,
  forecastByMonth,
  openByStage,
  ReportInput,
  REPORT_HINT,
  REPORT_SETTING_VALUES,
  ReportWindow,
  Statement,
} from './pipeline-report.sql';
import { Stage } from './stage.entity';
import { effectiveProbabilities } from './stage-probability';

const DAY_MS = 86_400_000;

/** The window `[from, to)` a query asks for, with its defaults, or a 400 naming what is wrong. */
export function reportWindow(query: PipelineReportQuery, now: Date): ReportWindow {
  const to = query.to !== undefined ? new Date(query.to) : now;
  const from = query.from !== undefined ? new Date(query.from) : new Date(to.getTime() - REPORT_DEFAULT_DAYS * DAY_MS);
  if (Number.isNaN(to.getTime())) throw DomainError.invalid('to', 'to must be an RFC 3339 date-time');
  if (Number.isNaN(from.getTime())) throw DomainError.invalid('from', 'from must be an RFC 3339 date-time');
  if (from >= to) throw DomainError.invalid('from', `from (${from.toISOString()}) must be before to (${to.toISOString()}).`);
  if (to.getTime() - from.getTime() > REPORT_MAX_DAYS * DAY_MS) {
    throw DomainError.invalid('to', `A report covers at most ${REPORT_MAX_DAYS} days; from and to are further apart.`, 'out_of_range');
  }
  return { from, to };
}

const ratio = (part: number, whole: number): number | null => (whole ? part / whole : null);

@Injectable()
export class PipelineReportService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
  ) {}

  async report(pipelineId: string, query: PipelineReportQuery): Promise<PipelineReportView> {
    const window = reportWindow(query, new Date());
    const timeZone = query.time_zone ?? 'UTC';
    await this.knownToDatabase(timeZone);
    if (!isId(pipelineId, IdPrefix.Pipeline)) throw DomainError.notFound('pipeline', pipelineId);
    const budget = new QueryBudget(this.settings.queryTimeoutMs, REPORT_HINT);
    // One snapshot for every figure (a move committed between two statements cannot count in one and not
    // the other), and one budget for all of them: the caller's deadline, nothing left running after it.
    return budget.run(
      this.dataSource,
      async (m) => {
        const [exists] = await m(`SELECT 1 FROM pipelines WHERE id = $1`, [pipelineId]);
        if (!exists) throw DomainError.notFound('pipeline', pipelineId);
        const stageRows = await m<Pick<Stage, 'id' | 'name' | 'type' | 'position' | 'probability'>>(
          `SELECT id, name, type, position, probability FROM stages WHERE pipeline_id = $1 ORDER BY position`,
          [pipelineId],
        );
        const probabilities = effectiveProbabilities(stageRows);
        const stages = stageRows.map((s, i) => ({ id: s.id, type: s.type, position: s.position, probability: probabilities[i] }));
        const probabilityOf = new Map(stages.map((s) => [s.id, s.probability]));

        const open = await run<{ stage_id: string; currency: string; open_count: number; open_value: string }>(m, openByStage(pipelineId));
        const currency = await this.currencyOf(m, pipelineId, query.currency);
        const input: ReportInput = { pipelineId, window, timeZone, currency: query.currency ?? null, stages };

        const [closed] = await run<{ won_count: number; won_value: string; lost_count: number; avg_cycle_days: number | null }>(m, closedInWindow(input));
        const forecastRows = await run<{ month: string; stage_id: string; count: number; value: string }>(m, forecastByMonth(input));
        const flow = await run<{ stage_id: string; entered: number; advanced: number }>(m, enteredAndAdvanced(input));
        const stays = await run<{ stage_id: string; days: number[] }>(m, daysInStage(input));

        const flowOf = new Map(flow.map((r) => [r.stage_id, r]));
        const staysOf = new Map(stays.map((r) => [r.stage_id, r.days]));
        const stageViews = stages.map((stage, i): StageReportView => {
          const rows = open.filter((r) => r.stage_id === stage.id && (currency === null || r.currency === currency));
          const openValue = rows.reduce((sum, r) => sum + Number(r.open_value), 0);
          const entered = flowOf.get(stage.id)?.entered ?? 0;
          const advanced = flowOf.get(stage.id)?.advanced ?? 0;
          const days = staysOf.get(stage.id);
          return {
            stage_id: stage.id,
            name: stageRows[i].name,
            type: stageRows[i].type,
            probability: stage.probability,
            open_count: rows.reduce((sum, r) => sum + r.open_count, 0),
            open_value: openValue,
            weighted_value: Math.round(openValue * stage.probability),
            entered,
            advanced,
            conversion_rate: ratio(advanced, entered),
            days_in_stage: { p50: days?.[0] ?? null, p90: days?.[1] ?? null },
          };
        });
        return {
          pipeline_id: pipelineId,
          from: window.from.toISOString(),
          to: window.to.toISOString(),
          time_zone: timeZone,
          currency,
          stages: stageViews,
          won_count: closed.won_count,
          won_value: Number(closed.won_value),
          lost_count: closed.lost_count,
          win_rate: ratio(closed.won_count, closed.won_count + closed.lost_count),
          avg_cycle_days: closed.avg_cycle_days,
          forecast: forecastOf(forecastRows, probabilityOf),
        };
      },
      REPORT_SETTING_VALUES,
      { repeatable: true },
    );
  }

  /** The runtime's zone data passed the name (the DTO); the database's may lack a few legacy names. */
  private async knownToDatabase(timeZone: string): Promise<void> {
    if (timeZone === 'UTC') return;
    try {
      await this.dataSource.query(`SELECT now() AT TIME ZONE $1`, [timeZone]);
    } catch (error) {
      if ((error as { code?: string }).code !== '22023') throw error;
      throw DomainError.invalid('time_zone', `The time zone '${timeZone}' is not known to the database; use an IANA name such as Europe/Berlin.`);
    }
  }

  /** The currency reported: the one asked for, else the only one the pipeline's deals hold, else a 400. */
  private async currencyOf(m: RunStatement, pipelineId: string, asked: string | undefined): Promise<string | null> {
    if (asked !== undefined) return asked;
    const [{ lo, hi }] = await run<{ lo: string | null; hi: string | null }>(m, currencyRange(pipelineId));
    if (lo === null || hi === null) return null;
    if (lo.trim() === hi.trim()) return lo.trim();
    const held = (await run<{ currency: string }>(m, currenciesHeld(pipelineId))).map((r) => r.currency.trim());
    throw DomainError.invalid(
      'currency',
      `The deals of pipeline '${pipelineId}' hold ${held.length} currencies (${held.join(', ')}); money is never added across currencies: name one with currency.`,
      'mixed_currencies',
    );
  }
}

/** Months in order, each weighted by its deals' stages; rounded once per month, to whole cents. */
function forecastOf(rows: Array<{ month: string; stage_id: string; count: number; value: string }>, probabilityOf: Map<string, number>): ForecastMonthView[] {
  const months = new Map<string, { count: number; value: number; weighted: number }>();
  for (const row of rows) {
    const month = months.get(row.month) ?? { count: 0, value: 0, weighted: 0 };
    month.count += row.count;
    month.value += Number(row.value);
    month.weighted += Number(row.value) * (probabilityOf.get(row.stage_id) ?? 0);
    months.set(row.month, month);
  }
  return [...months].map(([month, m]) => ({ month, count: m.count, value: m.value, weighted_value: Math.round(m.weighted) }));
}

function run<T extends object>(m: RunStatement, statement: Statement): Promise<T[]> {
  return m<T>(statement.text, statement.params);
}
