import { ApiProperty, PickType } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsDefined, IsString, MaxLength } from 'class-validator';
import { Rules } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import { RelatedSummary } from '../related';
import { DealView } from './deal.dto';

/** The deal subset GET /contacts/:id/deals lists. */
export class DealSummary extends PickType(DealView, [
  'id',
  'name',
  'pipeline_id',
  'stage_id',
  'value',
  'currency',
  'status',
  'created_at',
  'updated_at',
] as const) {}

/** How an item of GET /contacts/:id/deals is associated with the contact (docs/associations.md). */
export class AssociationOfItem {
  @ApiProperty({ type: String, nullable: true })
  role!: string | null;
  @ApiProperty({ type: Boolean })
  is_primary!: boolean;
}

/** An item of GET /contacts/:id/deals: every deal the contact is associated with, primary or not. */
export class ContactDealItem extends DealSummary {
  @ApiProperty({ type: () => AssociationOfItem })
  association!: AssociationOfItem;
}

/*
 * Ids in the internal requests are checked for their length, not their shape: they come from records the
 * contacts service keeps and from custom reference values, which may be any string of up to 64
 * characters, and an id no deal has is simply matched by none.
 */
const STORED_ID_MAX = 64;
const StoredId = () => Rules(IsDefined(), IsString(), MaxLength(STORED_ID_MAX));

/** Body of Ops.dealsInternal.listForContact; the reply is a Page<DealSummary>. */
export class ListDealsForContactRequest extends SortablePageQuery {
  @StoredId()
  contact_id!: string;
}

/** Body of Ops.dealsInternal.reassignContact; idempotent, so a retried merge is safe. */
export class ReassignContactRequest {
  @StoredId()
  from_contact_id!: string;

  @StoredId()
  to_contact_id!: string;
}

export interface ReassignContactReply {
  moved: number;
}

/** Body of Ops.dealsInternal.resolve. */
export class ResolveDealsRequest {
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(STORED_ID_MAX, { each: true })
  deal_ids!: string[];
}

export interface ResolveDealsReply {
  deals: RelatedSummary[];
}

export * from './deal.dto';
export * from './events';
export * from './pipeline.dto';
export * from './validators';
export * from './pipeline-report';
