/**
 * The pipeline report (docs/pipeline-report.md) as the issue defines it, computed from the records the API
 * answers (each deal's stage history, its final state, the stages' probabilities), for the report's specs.
 */

export interface Stage {
  id: string;
  name: string;
  type: 'open' | 'won' | 'lost';
  position: number;
  probability: number;
}
export interface Deal {
  id: string;
  stage_id: string;
  status: string;
  value: number;
  currency: string;
  expected_close: string | null;
  created_at: string;
  updated_at: string;
}
export interface HistoryRow {
  deal_id: string;
  from_stage_id: string | null;
  to_stage_id: string;
  changed_at: string;
}

export const DAY_MS = 86_400_000;
export const ms = (iso: string) => new Date(iso).getTime();

/** PostgreSQL's percentile_cont: linear interpolation between the two closest ranks. */
export function percentileCont(values: number[], fraction: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = fraction * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

function monthIn(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit' }).formatToParts(new Date(iso));
  return `${parts.find((p) => p.type === 'year')!.value}-${parts.find((p) => p.type === 'month')!.value}`;
}

/** The report as the issue defines it, from the records themselves. */
export function expectedReport(stages: Stage[], deals: Deal[], histories: Map<string, HistoryRow[]>, from: number, to: number, timeZone: string) {
  const isOpen = (d: Deal) => d.status === 'open' || d.status === 'stalled';
  const byId = new Map(stages.map((s) => [s.id, s]));
  const stageFigures = stages.map((stage) => {
    const here = deals.filter((d) => d.stage_id === stage.id && isOpen(d));
    const openValue = here.reduce((sum, d) => sum + d.value, 0);
    let entered = 0;
    let advanced = 0;
    const stays: number[] = [];
    for (const rows of histories.values()) {
      const first = rows.findIndex((r) => r.to_stage_id === stage.id && ms(r.changed_at) >= from && ms(r.changed_at) < to);
      if (first >= 0) {
        entered++;
        const later = rows.slice(first + 1).map((r) => byId.get(r.to_stage_id));
        if (later.some((t) => t && (t.type === 'won' || (t.type === 'open' && t.position > stage.position)))) advanced++;
      }
      rows.forEach((r, i) => {
        if (i > 0 && r.from_stage_id === stage.id && ms(r.changed_at) >= from && ms(r.changed_at) < to) {
          stays.push((ms(r.changed_at) - ms(rows[i - 1].changed_at)) / DAY_MS);
        }
      });
    }
    return {
      stage_id: stage.id,
      name: stage.name,
      type: stage.type,
      probability: stage.probability,
      open_count: here.length,
      open_value: openValue,
      weighted_value: Math.round(openValue * stage.probability),
      entered,
      advanced,
      conversion_rate: entered ? advanced / entered : null,
      days_in_stage: { p50: percentileCont(stays, 0.5), p90: percentileCont(stays, 0.9) },
    };
  });
  // No deal is changed after it closes, so its last update is when it was won or lost.
  const closed = deals.filter((d) => (d.status === 'won' || d.status === 'lost') && ms(d.updated_at) >= from && ms(d.updated_at) < to);
  const won = closed.filter((d) => d.status === 'won');
  const lost = closed.filter((d) => d.status === 'lost');
  const months = new Map<string, { count: number; value: number; weighted: number }>();
  for (const d of deals.filter((d) => isOpen(d) && d.expected_close)) {
    const month = monthIn(d.expected_close!, timeZone);
    const m = months.get(month) ?? { count: 0, value: 0, weighted: 0 };
    m.count++;
    m.value += d.value;
    m.weighted += d.value * byId.get(d.stage_id)!.probability;
    months.set(month, m);
  }
  return {
    stages: stageFigures,
    won_count: won.length,
    won_value: won.reduce((sum, d) => sum + d.value, 0),
    lost_count: lost.length,
    win_rate: closed.length ? won.length / closed.length : null,
    avg_cycle_days: won.length ? won.reduce((sum, d) => sum + (ms(d.updated_at) - ms(d.created_at)) / DAY_MS, 0) / won.length : null,
    forecast: [...months.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([month, m]) => ({ month, count: m.count, value: m.value, weighted_value: Math.round(m.weighted) })),
  };
}

/** Exact for counts and money; days and rates within a microsecond's worth (the API shows milliseconds). */
export function expectReport(actual: any, expected: ReturnType<typeof expectedReport>): void {
  const close = (value: number | null) => (value === null ? null : expect.closeTo(value, 6));
  expect(actual).toMatchObject({
    ...expected,
    win_rate: close(expected.win_rate),
    avg_cycle_days: close(expected.avg_cycle_days),
    stages: expected.stages.map((s) => ({
      ...s,
      conversion_rate: close(s.conversion_rate),
      days_in_stage: { p50: close(s.days_in_stage.p50), p90: close(s.days_in_stage.p90) },
    })),
  });
}
