import { ApiProperty } from '@nestjs/swagger';
import { IsIdOf, IfPresent } from '../dto-helpers';
import { IsMetadata, PageQuery, QueryInt } from '@crm/common';
import { Transform, Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsOptional, IsRFC3339, IsString, Length, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
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



export class CreateDealDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Length(1, DEAL_NAME_MAX, { message: `name must be 1 to ${DEAL_NAME_MAX} characters` })
  name!: string;

  @IsDefined({ message: 'pipeline_id is required' })
  @SchemaField({ reference_target: 'pipelines' })
  @IsIdOf('pipe', 'pipeline_id')
  pipeline_id!: string;

  @IsDefined({ message: 'stage_id is required' })
  @SchemaField({ reference_target: 'stages' })
  @IsIdOf('stg', 'stage_id')
  stage_id!: string;

  @IsOptional()
  @SchemaField({ reference_target: 'contacts' })
  @IsIdOf('cont', 'contact_id')
  contact_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'companies' })
  @IsIdOf('comp', 'company_id')
  company_id?: string | null;

  @IsOptional()
  @SchemaField({ type: 'currency' })
  @IsInt({ message: 'value must be an integer number of cents' })
  @Min(0, { message: 'value must be zero or more' })
  @Max(DEAL_VALUE_MAX, { message: `value must be at most ${DEAL_VALUE_MAX}` })
  value?: number;

  @IsOptional()
  @Transform(upperCase)
  @IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' })
  currency?: string;

  @IsOptional()
  @IsIn(DEAL_STATUSES, { message: `status must be one of ${DEAL_STATUSES.join(', ')}` })
  status?: DealStatus;

  @IsOptional()
  @IsRFC3339({ message: 'expected_close must be an RFC 3339 date-time, e.g. 2030-01-31T00:00:00Z' })
  expected_close?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'users' })
  @IsIdOf('user', 'owner_id')
  owner_id?: string | null;

  @IsOptional()
  @IsIn(DEAL_SOURCES, { message: `source must be one of ${DEAL_SOURCES.join(', ')}` })
  source?: DealSource | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on deals (POST /objects/deals/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

/** Every create field is optional; name, pipeline_id, stage_id, value, currency and status cannot be null. */
export class UpdateDealDto {
  @IfPresent()
  @IsString({ message: 'name must be a string' })
  @Length(1, DEAL_NAME_MAX, { message: `name must be 1 to ${DEAL_NAME_MAX} characters` })
  name?: string;

  @IfPresent()
  @SchemaField({ reference_target: 'pipelines' })
  @IsIdOf('pipe', 'pipeline_id')
  pipeline_id?: string;

  @IfPresent()
  @SchemaField({ reference_target: 'stages' })
  @IsIdOf('stg', 'stage_id')
  stage_id?: string;

  @IsOptional()
  @SchemaField({ reference_target: 'contacts' })
  @IsIdOf('cont', 'contact_id')
  contact_id?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'companies' })
  @IsIdOf('comp', 'company_id')
  company_id?: string | null;

  @IfPresent()
  @SchemaField({ type: 'currency' })
  @IsInt({ message: 'value must be an integer number of cents' })
  @Min(0, { message: 'value must be zero or more' })
  @Max(DEAL_VALUE_MAX, { message: `value must be at most ${DEAL_VALUE_MAX}` })
  value?: number;

  @IfPresent()
  @Transform(upperCase)
  @IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' })
  currency?: string;

  @IfPresent()
  @IsIn(DEAL_STATUSES, { message: `status must be one of ${DEAL_STATUSES.join(', ')}` })
  status?: DealStatus;

  @IsOptional()
  @IsRFC3339({ message: 'expected_close must be an RFC 3339 date-time, e.g. 2030-01-31T00:00:00Z' })
  expected_close?: string | null;

  @IsOptional()
  @SchemaField({ reference_target: 'users' })
  @IsIdOf('user', 'owner_id')
  owner_id?: string | null;

  @IsOptional()
  @IsIn(DEAL_SOURCES, { message: `source must be one of ${DEAL_SOURCES.join(', ')}` })
  source?: DealSource | null;

  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on deals (POST /objects/deals/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;

  @IsOptional()
  @IsString({ message: 'loss_reason must be a string' })
  @Length(1, LOSS_REASON_MAX, { message: `loss_reason must be 1 to ${LOSS_REASON_MAX} characters` })
  loss_reason?: string | null;
}

export class MoveDealStageDto {
  @IsDefined({ message: 'stage_id is required' })
  @SchemaField({ reference_target: 'stages' })
  @IsIdOf('stg', 'stage_id')
  stage_id!: string;
}


/** Query of GET /pipelines/:id/deals. */
export class PipelineDealsQuery extends PageQuery {
  @IsOptional()
  @IsIn(DEAL_STATUSES, { message: `status must be one of ${DEAL_STATUSES.join(', ')}` })
  status?: DealStatus;

  @IsOptional()
  @SchemaField({ reference_target: 'stages' })
  @IsIdOf('stg', 'stage_id')
  stage_id?: string;
}

/** Query of GET /deals. Every filter narrows the list; all must match. */
export class ListDealsQuery extends PipelineDealsQuery {
  @IsOptional()
  @SchemaField({ reference_target: 'pipelines' })
  @IsIdOf('pipe', 'pipeline_id')
  pipeline_id?: string;

  @IsOptional()
  @SchemaField({ reference_target: 'contacts' })
  @IsIdOf('cont', 'contact_id')
  contact_id?: string;

  @IsOptional()
  @SchemaField({ reference_target: 'companies' })
  @IsIdOf('comp', 'company_id')
  company_id?: string;

  @IsOptional()
  @IsIdOf('user', 'owner_id')
  owner_id?: string;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'min_value must be an integer number of cents' })
  @Min(0, { message: 'min_value must be zero or more' })
  @Max(DEAL_VALUE_MAX, { message: `min_value must be at most ${DEAL_VALUE_MAX}` })
  min_value?: number;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'max_value must be an integer number of cents' })
  @Min(0, { message: 'max_value must be zero or more' })
  @Max(DEAL_VALUE_MAX, { message: `max_value must be at most ${DEAL_VALUE_MAX}` })
  max_value?: number;

  @IsOptional()
  @QueryInt()
  @IsInt({ message: 'days_since_activity_gt must be an integer' })
  @Min(0, { message: 'days_since_activity_gt must be zero or more' })
  @Max(36500, { message: 'days_since_activity_gt must be at most 36500' })
  days_since_activity_gt?: number;

  @IsOptional()
  @IsRFC3339({ message: 'created_after must be an RFC 3339 date-time' })
  created_after?: string;

  @IsOptional()
  @IsRFC3339({ message: 'created_before must be an RFC 3339 date-time' })
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
