import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsOptional, IsRFC3339 } from 'class-validator';
import {
  CompanyLink,
  ContactLink,
  DateTimeFilter,
  IfPresent,
  IsIdOf,
  IsOneOf,
  MetadataInput,
  NonEmptyText,
  OwnerLink,
  RefersTo,
  Rules,
  WholeNumber,
} from '../dto-helpers';
import { SortablePageQuery, QueryInt } from '../paging';
import { RelatedSummary } from '../related';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { IsCurrencyCode, upperCase } from './validators';

export const DEAL_STATUSES = ['open', 'won', 'lost', 'stalled'] as const;
export type DealStatus = (typeof DEAL_STATUSES)[number];

/** The acquisition sources contacts use, so deal and contact reports line up. */
export const DEAL_SOURCES = ['organic', 'referral', 'paid', 'social', 'email', 'event', 'outbound', 'other'] as const;
export type DealSource = (typeof DEAL_SOURCES)[number];

export const DEAL_NAME_MAX = 255;
export const LOSS_REASON_MAX = 500;
/** Largest value a JSON number carries exactly: 2^53 - 1 cents. */
export const DEAL_VALUE_MAX = Number.MAX_SAFE_INTEGER;

/*
 * Rules of the fields create and update treat differently. Create requires name, pipeline and stage and
 * defaults value, currency and status (null there counts as not given); update may leave any of them
 * out, but none can be set to null.
 */
const Name = () => NonEmptyText(DEAL_NAME_MAX);
const Pipeline = () => RefersTo('pipelines', 'pipe', 'pipeline_id');
const Stage = () => RefersTo('stages', 'stg', 'stage_id');
const Cents = () => WholeNumber(DEAL_VALUE_MAX, 'an integer number of cents');
const Value = () => Rules(SchemaField({ type: 'currency' }), Cents());
const Currency = () => Rules(Transform(upperCase), IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' }));
const Status = () => IsOneOf(DEAL_STATUSES);

/** The fields create and update treat alike; null clears them. */
class DealDetailsDto {
  @IsOptional()
  @IsRFC3339({ message: 'expected_close must be an RFC 3339 date-time, e.g. 2030-01-31T00:00:00Z' })
  expected_close?: string | null;

  @OwnerLink()
  owner_id?: string | null;

  @IsOptional()
  @IsOneOf(DEAL_SOURCES)
  source?: DealSource | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on deals (POST /objects/deals/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;

  /**
   * When true, value is the sum of the deal's line items' amounts (docs/products.md), kept with each line
   * write; value cannot be sent then. Turning it on sets value to the lines' sum; off keeps the last sum.
   */
  @IfPresent()
  @IsBoolean({ message: 'value_from_line_items must be true or false' })
  value_from_line_items?: boolean;
}

export class CreateDealDto extends DealDetailsDto {
  @IsDefined({ message: 'name is required' })
  @Name()
  name!: string;

  @IsDefined({ message: 'pipeline_id is required' })
  @Pipeline()
  pipeline_id!: string;

  @IsDefined({ message: 'stage_id is required' })
  @Stage()
  stage_id!: string;

  @ContactLink()
  contact_id?: string | null;

  @CompanyLink()
  company_id?: string | null;

  @IsOptional()
  @Value()
  value?: number;

  @IsOptional()
  @Currency()
  currency?: string;

  @IsOptional()
  @Status()
  status?: DealStatus;
}

/**
 * loss_reason is set by update only. Declared apart from the shared details and after them, so that it
 * stays the last field of an update, where error details and the documented schema have always had it.
 */
class DealUpdateDetailsDto extends DealDetailsDto {
  @IsOptional()
  @NonEmptyText(LOSS_REASON_MAX)
  loss_reason?: string | null;
}

/** Every create field is optional; name, pipeline_id, stage_id, value, currency and status cannot be null. */
export class UpdateDealDto extends DealUpdateDetailsDto {
  @IfPresent()
  @Name()
  name?: string;

  @IfPresent()
  @Pipeline()
  pipeline_id?: string;

  @IfPresent()
  @Stage()
  stage_id?: string;

  @ContactLink()
  contact_id?: string | null;

  @CompanyLink()
  company_id?: string | null;

  @IfPresent()
  @Value()
  value?: number;

  @IfPresent()
  @Currency()
  currency?: string;

  @IfPresent()
  @Status()
  status?: DealStatus;
}

export class MoveDealStageDto {
  @IsDefined({ message: 'stage_id is required' })
  @Stage()
  stage_id!: string;
}

/** Query of GET /pipelines/:id/deals. */
export class PipelineDealsQuery extends SortablePageQuery {
  @IsOptional()
  @Status()
  status?: DealStatus;

  @IsOptional()
  @Stage()
  stage_id?: string;
}

/** Query of GET /deals. Every filter narrows the list; all must match. */
export class ListDealsQuery extends PipelineDealsQuery {
  @IsOptional()
  @Pipeline()
  pipeline_id?: string;

  @ContactLink()
  contact_id?: string;

  @CompanyLink()
  company_id?: string;

  @IsOptional()
  @IsIdOf('user', 'owner_id')
  owner_id?: string;

  @IsOptional()
  @QueryInt()
  @Cents()
  min_value?: number;

  @IsOptional()
  @QueryInt()
  @Cents()
  max_value?: number;

  @IsOptional()
  @QueryInt()
  @WholeNumber(36500)
  days_since_activity_gt?: number;

  @DateTimeFilter()
  created_after?: string;

  @DateTimeFilter()
  created_before?: string;
}

/** A deal as create and list responses show it. */
export class DealView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  pipeline_id!: string;
  @ApiProperty({ type: String })
  stage_id!: string;
  @ApiProperty({ type: String, nullable: true })
  contact_id!: string | null;
  @ApiProperty({ type: String, nullable: true })
  company_id!: string | null;
  @ApiProperty({ type: Number })
  value!: number;
  @ApiProperty({ type: String })
  currency!: string;
  /** Whether value is the sum of the deal's line items' amounts. */
  @ApiProperty({ type: Boolean })
  value_from_line_items!: boolean;
  @ApiProperty({ enum: DEAL_STATUSES })
  status!: DealStatus;
  @ApiProperty({ type: String, nullable: true })
  expected_close!: string | null;
  @ApiProperty({ type: String, nullable: true })
  owner_id!: string | null;
  @ApiProperty({ enum: DEAL_SOURCES, nullable: true })
  source!: DealSource | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on deals. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true })
  loss_reason!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  stage_entered_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_activity_at!: string | null;
  @ApiProperty({ type: Number })
  days_in_stage!: number;
  @ApiProperty({ type: Number })
  deal_age_days!: number;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** The full record of get, update and stage-move: relationships filled in. */
export class DealRelationships {
  @ApiProperty({ type: () => RelatedSummary, nullable: true })
  contact!: RelatedSummary | null;
  @ApiProperty({ type: () => RelatedSummary, nullable: true })
  company!: RelatedSummary | null;
  @ApiProperty({ type: () => RelatedSummary })
  pipeline!: RelatedSummary;
  @ApiProperty({ type: () => RelatedSummary })
  stage!: RelatedSummary;
  /** The team member named by owner_id (see /users). */
  @ApiProperty({ type: () => RelatedSummary, nullable: true })
  owner!: RelatedSummary | null;
}

export class FullDealView extends DealView {
  @ApiProperty({ type: () => DealRelationships })
  relationships!: DealRelationships;
}

export class StageHistoryView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  deal_id!: string;
  @ApiProperty({ type: String, nullable: true })
  from_stage_id!: string | null;
  @ApiProperty({ type: String })
  to_stage_id!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  changed_at!: string;
  @ApiProperty({ type: String })
  changed_by!: string;
  /** The API key that made the change; null for changes the service made itself. */
  @ApiProperty({ type: String, nullable: true })
  changed_by_key_id!: string | null;
}
