import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, MaxLength, registerDecorator } from 'class-validator';
import { DateTimeFilter, Rules } from '../dto-helpers';
import { STAGE_TYPES, StageType } from './pipeline.dto';
import { IsCurrencyCode, upperCase } from './validators';

/** The window a report covers when the caller names none: the last 90 days up to now. */
export const REPORT_DEFAULT_DAYS = 90;
/** The longest window a report may cover. */
export const REPORT_MAX_DAYS = 3660;

/**
 * An IANA zone name (`UTC`, `Europe/Berlin`) the runtime's time zone data knows. Offsets such as `+01:00`
 * are refused: PostgreSQL reads them as POSIX zones, whose sign is the opposite of ISO 8601's.
 */
export function isTimeZoneName(value: unknown): boolean {
  if (typeof value !== 'string' || !/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const TimeZoneName = (): PropertyDecorator => (target: object, propertyName: string | symbol) =>
  registerDecorator({
    name: 'isTimeZoneName',
    target: target.constructor,
    propertyName: propertyName as string,
    options: { message: '$property must be an IANA time zone name such as UTC or Europe/Berlin' },
    validator: { validate: isTimeZoneName },
  });

/** Query of GET /pipelines/:pipeline_id/report (docs/pipeline-report.md). */
export class PipelineReportQuery {
  /** Start of the window, inclusive; default `to` minus 90 days. */
  @DateTimeFilter()
  from?: string;

  /** End of the window, exclusive; default now. */
  @DateTimeFilter()
  to?: string;

  /** The zone forecast months are read in; default UTC. */
  @Rules(IsOptional(), MaxLength(64, { message: 'time_zone must be at most 64 characters' }), TimeZoneName())
  time_zone?: string;

  /** Required only when the pipeline's deals hold more than one currency. */
  @Rules(IsOptional(), Transform(upperCase), IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' }))
  currency?: string;
}

export class DaysInStageView {
  @ApiProperty({ type: Number, nullable: true, example: 4.2 })
  p50!: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 12 })
  p90!: number | null;
}

export class StageReportView {
  @ApiProperty({ type: String, example: 'stg_01jd5x0000000000000000000a' })
  stage_id!: string;
  @ApiProperty({ type: String, example: 'Proposal' })
  name!: string;
  @ApiProperty({ enum: STAGE_TYPES, example: 'open' })
  type!: StageType;
  @ApiProperty({ type: Number, example: 0.4 })
  probability!: number;
  @ApiProperty({ type: Number, description: 'Deals in the stage now whose status is open or stalled.', example: 12 })
  open_count!: number;
  @ApiProperty({ type: Number, description: 'Their value, in cents.', example: 1200000 })
  open_value!: number;
  @ApiProperty({ type: Number, description: 'Their value times the stage probability, rounded to whole cents.', example: 480000 })
  weighted_value!: number;
  @ApiProperty({ type: Number, description: 'Deals that entered the stage in [from, to).', example: 30 })
  entered!: number;
  @ApiProperty({ type: Number, description: 'Of those, the ones that have since entered a later open stage or a won stage.', example: 18 })
  advanced!: number;
  @ApiProperty({ type: Number, nullable: true, example: 0.6 })
  conversion_rate!: number | null;
  @ApiProperty({ type: () => DaysInStageView, description: 'Percentiles of the stays in the stage that ended in [from, to), in days.' })
  days_in_stage!: DaysInStageView;
}

export class ForecastMonthView {
  @ApiProperty({ type: String, description: 'The month of expected_close in time_zone.', example: '2026-12' })
  month!: string;
  @ApiProperty({ type: Number, example: 4 })
  count!: number;
  @ApiProperty({ type: Number, example: 400000 })
  value!: number;
  @ApiProperty({ type: Number, example: 160000 })
  weighted_value!: number;
}

export class PipelineReportView {
  @ApiProperty({ type: String, example: 'pipe_01jd5x0000000000000000000a' })
  pipeline_id!: string;
  @ApiProperty({ type: String, format: 'date-time', example: '2026-09-01T00:00:00.000Z' })
  from!: string;
  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-30T00:00:00.000Z' })
  to!: string;
  @ApiProperty({ type: String, example: 'UTC' })
  time_zone!: string;
  @ApiProperty({ type: String, nullable: true, description: 'The currency reported; null when the pipeline holds no deal and none was asked.', example: 'USD' })
  currency!: string | null;
  @ApiProperty({ type: () => [StageReportView] })
  stages!: StageReportView[];
  @ApiProperty({ type: Number, example: 5 })
  won_count!: number;
  @ApiProperty({ type: Number, example: 500000 })
  won_value!: number;
  @ApiProperty({ type: Number, example: 3 })
  lost_count!: number;
  @ApiProperty({ type: Number, nullable: true, description: 'won / (won + lost); null when none closed.', example: 0.625 })
  win_rate!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean days from creation to won.', example: 32.5 })
  avg_cycle_days!: number | null;
  @ApiProperty({ type: () => [ForecastMonthView] })
  forecast!: ForecastMonthView[];
}
