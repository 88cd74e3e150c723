import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsOptional } from 'class-validator';
import { IfPresent, MetadataInput, NonEmptyText, Rules, Text, Trim, WholeNumber } from '../dto-helpers';
import { FieldChanges } from '../contacts/views';
import { CustomFieldsInput } from '../schema/field-values';
import { SchemaField } from '../schema/schema-field';
import { IsCurrencyCode, upperCase } from '../deals/validators';

/** Limits of a product's fields (docs/products.md). */
export const ProductLimits = { name: 255, sku: 100, description: 5000 } as const;
/** Largest price a JSON number carries exactly: 2^53 - 1 cents. */
export const PRICE_MAX = Number.MAX_SAFE_INTEGER;

const Price = () => Rules(SchemaField({ type: 'currency' }), WholeNumber(PRICE_MAX, 'an integer number of cents'));
const Currency = () => Rules(Transform(upperCase), IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' }));
const Active = () => IsBoolean({ message: 'active must be true or false' });

class ProductFieldsDto {
  /** Unique among products whatever its case (`ABC-1` and `abc-1` are one SKU); the key an upsert matches on. */
  @IsOptional()
  @SchemaField({ unique: true })
  @Trim()
  @NonEmptyText(ProductLimits.sku)
  sku?: string | null;

  @IsOptional()
  @Text(ProductLimits.description)
  description?: string | null;

  @MetadataInput()
  metadata?: Record<string, unknown> | null;

  /** Values of the custom fields defined on products (POST /objects/products/fields); PATCH merges by key. */
  @CustomFieldsInput()
  custom_fields?: Record<string, unknown> | null;
}

export class CreateProductDto extends ProductFieldsDto {
  @IsDefined({ message: 'name is required' })
  @Trim()
  @NonEmptyText(ProductLimits.name)
  name!: string;

  /** Unit price in cents; 0 when left out. */
  @IsOptional()
  @Price()
  price?: number;

  /** ISO 4217; USD when left out. */
  @IsOptional()
  @Currency()
  currency?: string;

  /** Whether the product is offered; true when left out. */
  @IsOptional()
  @Active()
  active?: boolean;
}

/** Every field is optional; name, price, currency and active cannot be null. */
export class UpdateProductDto extends ProductFieldsDto {
  @IfPresent()
  @Trim()
  @NonEmptyText(ProductLimits.name)
  name?: string;

  @IfPresent()
  @Price()
  price?: number;

  @IfPresent()
  @Currency()
  currency?: string;

  @IfPresent()
  @Active()
  active?: boolean;
}

export class ProductView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String, nullable: true })
  sku!: string | null;
  @ApiProperty({ type: String, nullable: true })
  description!: string | null;
  /** Unit price in cents. */
  @ApiProperty({ type: Number })
  price!: number;
  @ApiProperty({ type: String })
  currency!: string;
  @ApiProperty({ type: Boolean })
  active!: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true })
  custom_fields!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** Data of product.created. */
export class ProductCreatedData {
  @ApiProperty({ type: String })
  product_id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String, nullable: true })
  sku!: string | null;
  @ApiProperty({ type: Number })
  price!: number;
  @ApiProperty({ type: String })
  currency!: string;
}

/** Data of product.updated: the fields whose values changed, before and after. */
export class ProductUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  product_id!: string;
}

/** Data of product.deleted. */
export class ProductDeletedData {
  @ApiProperty({ type: String })
  product_id!: string;
}
