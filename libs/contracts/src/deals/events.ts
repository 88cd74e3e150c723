import { ApiProperty, IntersectionType, PickType } from '@nestjs/swagger';
import { DealView } from './deal.dto';

/** Payloads of the events the deals service writes to its outbox (docs/deals.md describes when). */

/** Which deal, and where it stands: the start of the deal.created, deal.won and deal.lost payloads. */
class DealPlacement {
  @ApiProperty({ type: String })
  deal_id!: string;
  @ApiProperty({ type: String })
  pipeline_id!: string;
  @ApiProperty({ type: String })
  stage_id!: string;
}

export class DealCreatedData extends IntersectionType(
  DealPlacement,
  PickType(DealView, ['name', 'contact_id', 'company_id', 'value', 'currency', 'status'] as const),
) {}

export class DealUpdatedData {
  @ApiProperty({ type: String })
  deal_id!: string;
  /** Names of the fields whose values changed. */
  @ApiProperty({ type: [String] })
  changed!: string[];
}

export class DealDeletedData {
  @ApiProperty({ type: String })
  deal_id!: string;
}

export class DealWonData extends IntersectionType(DealPlacement, PickType(DealView, ['value', 'currency'] as const)) {}

export class DealLostData extends IntersectionType(DealPlacement, PickType(DealView, ['loss_reason'] as const)) {}

export class DealStaleData {
  @ApiProperty({ type: String })
  deal_id!: string;
  /** The inactivity clock: last_activity_at, or created_at when the deal never had activity. */
  @ApiProperty({ type: String, format: 'date-time' })
  last_activity_at!: string;
  @ApiProperty({ type: Number })
  threshold_days!: number;
}

export class PipelineChangedData {
  @ApiProperty({ type: String })
  pipeline_id!: string;
  @ApiProperty({ type: [String], required: false })
  changed?: string[];
}
