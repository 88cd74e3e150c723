import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsNumber, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { IfPresent, IsIdOf, IsOneOf, MetadataInput, NonEmptyText, WholeNumber } from '../dto-helpers';
import { IsMetadata } from '../metadata';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';

export const STAGE_TYPES = ['open', 'won', 'lost'] as const;
export type StageType = (typeof STAGE_TYPES)[number];

/** Most stages one pipeline may hold; HubSpot allows 100, real pipelines have under 15. */
export const MAX_STAGES_PER_PIPELINE = 50;
export const PIPELINE_NAME_MAX = 100;
export const STAGE_NAME_MAX = 100;

/** A stage as sent inside POST /pipelines, and the body of POST /pipelines/:id/stages. */
export class StageInputDto {
  @IsDefined({ message: 'name is required' })
  @NonEmptyText(STAGE_NAME_MAX)
  name!: string;

  @IsDefined({ message: 'type is required' })
  @IsOneOf(STAGE_TYPES)
  type!: StageType;

  @IsOptional()
  @WholeNumber(MAX_STAGES_PER_PIPELINE)
  position?: number;

  @IsOptional()
  @IsString({ message: 'color must be a string' })
  @Matches(/^#[0-9a-fA-F]{6}$/, { message: 'color must be a hex color #rrggbb' })
  color?: string;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'probability must be a number' })
  @Min(0, { message: 'probability must be between 0.0 and 1.0' })
  @Max(1, { message: 'probability must be between 0.0 and 1.0' })
  probability?: number;
}

export class CreatePipelineDto {
  @IsDefined({ message: 'name is required' })
  @NonEmptyText(PIPELINE_NAME_MAX)
  name!: string;

  @IsOptional()
  @IsBoolean({ message: 'is_default must be a boolean' })
  is_default?: boolean;

  @IsOptional()
  @IsArray({ message: 'stages must be an array' })
  @ArrayMaxSize(MAX_STAGES_PER_PIPELINE, { message: `stages may hold at most ${MAX_STAGES_PER_PIPELINE} stages` })
  @ValidateNested({ each: true })
  @Type(() => StageInputDto)
  @SchemaField({ items: () => StageInputDto })
  stages?: StageInputDto[];

  @MetadataInput()
  metadata?: Record<string, unknown>;

  /** Values of the custom fields defined on pipelines (POST /objects/pipelines/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class UpdatePipelineDto {
  @IfPresent()
  @NonEmptyText(PIPELINE_NAME_MAX)
  name?: string;

  @IfPresent()
  @IsBoolean({ message: 'is_default must be a boolean' })
  is_default?: boolean;

  @IfPresent()
  @IsMetadata()
  metadata?: Record<string, unknown>;

  /** Values of the custom fields defined on pipelines (POST /objects/pipelines/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class AddStageDto extends StageInputDto {}

export class ReorderStagesDto {
  @IsDefined({ message: 'stage_ids is required' })
  @IsArray({ message: 'stage_ids must be an array' })
  @ArrayMaxSize(MAX_STAGES_PER_PIPELINE * 2, { message: `stage_ids may hold at most ${MAX_STAGES_PER_PIPELINE * 2} ids` })
  @IsIdOf('stg', 'stage_ids', { each: true })
  stage_ids!: string[];
}

/** Query of DELETE /pipelines/:id and DELETE /pipelines/:id/stages/:stage_id. */
export class DeleteWithMoveQuery {
  @IsOptional()
  @IsIdOf('stg', 'move_to_stage_id')
  move_to_stage_id?: string;
}

export class StageView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ enum: STAGE_TYPES })
  type!: StageType;
  @ApiProperty({ type: Number })
  position!: number;
  @ApiProperty({ type: String, nullable: true })
  color!: string | null;
  @ApiProperty({ type: Number })
  probability!: number;
}

export class PipelineView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: Boolean })
  is_default!: boolean;
  @ApiProperty({ type: () => [StageView] })
  stages!: StageView[];
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  /** Values of the custom fields defined on pipelines. */
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}
