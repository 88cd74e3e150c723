import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsDefined, IsIn, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import type { ErrorBody } from '../errors';
import type { ValidationWarning } from '../schema/field-types';

/** What one batch request does to every item (docs/batch.md). */
export const BATCH_OPERATIONS = ['create', 'update', 'upsert', 'delete'] as const;
export type BatchOperation = (typeof BATCH_OPERATIONS)[number];

/**
 * Limits of a batch write. `bodyBytes` is the body limit of the batch routes (the rest of the API keeps
 * 1 MiB): 200 records at 40 KiB each, which holds every built-in field at its longest with well-filled
 * metadata and custom fields.
 */
export const BatchLimits = {
  items: 200,
  bodyBytes: 8 * 1024 * 1024,
  key: 63,
} as const;

/** `POST /<object>/batch`: one operation applied to 1 to 200 items. */
export class BatchWriteDto {
  @ApiProperty({ enum: BATCH_OPERATIONS, description: 'create, update ({id, ...fields}), upsert (create bodies matched on a unique key) or delete ({id}).' })
  @IsDefined({ message: 'operation is required' })
  @IsIn(BATCH_OPERATIONS, { message: `operation must be one of ${BATCH_OPERATIONS.join(', ')}` })
  operation!: BatchOperation;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, minItems: 1, maxItems: BatchLimits.items })
  @IsDefined({ message: 'items is required' })
  @IsArray({ message: 'items must be an array' })
  @ArrayMinSize(1, { message: 'items must hold at least 1 item' })
  @ArrayMaxSize(BatchLimits.items, { message: `items may hold at most ${BatchLimits.items} items` })
  @IsObject({ each: true, message: 'each item must be a JSON object' })
  items!: Record<string, unknown>[];

  @ApiProperty({ type: Boolean, required: false, default: false, description: 'Apply every item in one transaction, or none of them.' })
  @IsOptional()
  @IsBoolean({ message: 'all_or_none must be a boolean' })
  all_or_none?: boolean;

  @ApiProperty({
    type: String,
    required: false,
    description:
      'upsert only: the unique field items are matched on. Contacts match on email and companies on domain (the default); a custom object names one of its unique fields.',
  })
  @IsOptional()
  @IsString({ message: 'key must be a string' })
  @MaxLength(BatchLimits.key, { message: `key must be at most ${BatchLimits.key} characters` })
  key?: string;
}

/** What happened to one item: the status and answer its single write would have given. */
export interface BatchItemResult<V> {
  index: number;
  /** 201 created, 200 updated (or matched and unchanged), 204 deleted, or the 4xx of the failure. */
  status: number;
  data?: V;
  error?: ErrorBody;
  /** What a soft-enforced write accepted although it broke a custom field definition, as the single write reports it. */
  warnings?: ValidationWarning[];
}

/** The answer of a batch: one result per item, in input order. */
export interface BatchReply<V> {
  data: BatchItemResult<V>[];
}
