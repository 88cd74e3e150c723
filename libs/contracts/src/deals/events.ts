import { ApiProperty, ApiPropertyOptional, IntersectionType, PickType } from '@nestjs/swagger';
import { RECORD_DESCRIPTION, RecordVersion } from '../events';
import { FieldChanges } from '../contacts/views';
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
  IntersectionType(DealPlacement, RecordVersion),
  PickType(DealView, ['name', 'contact_id', 'company_id', 'value', 'currency', 'status'] as const),
) {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: RECORD_DESCRIPTION })
  record?: object;
}

/**
 * The fields whose values changed, with their values before and after as the API shows them. A stage move
 * lists stage_id and stage_entered_at (and pipeline_id, status and loss_reason when they change too).
 */
export class DealUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  deal_id!: string;
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

/** Data of pipeline.created and pipeline.deleted. */
export class PipelineChangedData {
  @ApiProperty({ type: String })
  pipeline_id!: string;
  @ApiProperty({ type: [String], required: false })
  changed?: string[];
}

/**
 * Data of pipeline.updated: the fields whose values changed (name, is_default, metadata, custom_fields, or
 * stages when one is added, reordered or deleted), with their values before and after as the API shows them.
 */
export class PipelineUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  pipeline_id!: string;
}
