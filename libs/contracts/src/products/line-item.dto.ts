import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDefined, IsOptional, registerDecorator, ValidationArguments } from 'class-validator';
import { IfPresent, IsIdOf, NonEmptyText, Rules, Trim, WholeNumber } from '../dto-helpers';
import { FieldChanges } from '../contacts/views';
import { IsCurrencyCode, upperCase } from '../deals/validators';
import { PRICE_MAX, ProductLimits } from './product.dto';

/** Limits of a line item (docs/products.md). */
export const LineItemLimits = {
  /** At most this many units, with at most `quantityDecimals` digits after the point. */
  quantity: 1_000_000_000,
  quantityDecimals: 4,
  /** A discount of 0 to 100 percent with at most two digits after the point. */
  discountDecimals: 2,
  /** Lines a deal may have. */
  perDeal: 500,
} as const;

/**
 * A decimal number within (`exclusiveMin`, `max`] (or [min, max]) with at most `decimals` digits after the
 * point, as JSON writes it (`2.5`, never `2.5e-7`): the only fractions the amount arithmetic takes exactly.
 */
function IsDecimal(spec: { min: number; exclusiveMin?: boolean; max: number; decimals: number; words: string }): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDecimal',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: (args: ValidationArguments) => `${args.property} must be ${spec.words}` },
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'number' || !Number.isFinite(value)) return false;
          if (spec.exclusiveMin ? value <= spec.min : value < spec.min) return false;
          if (value > spec.max) return false;
          return new RegExp(`^\\d+(\\.\\d{1,${spec.decimals}})?$`).test(String(value));
        },
      },
    });
}

const Quantity = () =>
  IsDecimal({
    min: 0,
    exclusiveMin: true,
    max: LineItemLimits.quantity,
    decimals: LineItemLimits.quantityDecimals,
    words: `a number greater than 0 and at most ${LineItemLimits.quantity}, with at most ${LineItemLimits.quantityDecimals} decimals`,
  });
const Discount = () =>
  IsDecimal({
    min: 0,
    max: 100,
    decimals: LineItemLimits.discountDecimals,
    words: `a percentage from 0 to 100 with at most ${LineItemLimits.discountDecimals} decimals`,
  });
const UnitPrice = () => WholeNumber(PRICE_MAX, 'an integer number of cents');
const Currency = () => Rules(Transform(upperCase), IsCurrencyCode({ message: 'currency must be an ISO 4217 code such as USD' }));
const Name = () => Rules(Trim(), NonEmptyText(ProductLimits.name));

/** POST /deals/:id/line_items. */
export class CreateLineItemDto {
  /** The product sold; a line without one is free text and needs name and unit_price. */
  @IsOptional()
  @IsIdOf('prod', 'product_id')
  product_id?: string | null;

  /** The product's name when left out. */
  @IsOptional()
  @Name()
  name?: string;

  @IsDefined({ message: 'quantity is required' })
  @Quantity()
  quantity!: number;

  /** Cents; the product's price at the time when left out. */
  @IsOptional()
  @UnitPrice()
  unit_price?: number;

  @IsOptional()
  @Discount()
  discount_percent?: number;

  /** Must be the deal's currency; the deal's when left out. */
  @IsOptional()
  @Currency()
  currency?: string;
}

/** PATCH /deals/:id/line_items/:line_item_id: any field but the product; none can be null. */
export class UpdateLineItemDto {
  @IfPresent()
  @Name()
  name?: string;

  @IfPresent()
  @Quantity()
  quantity?: number;

  @IfPresent()
  @UnitPrice()
  unit_price?: number;

  @IfPresent()
  @Discount()
  discount_percent?: number;

  @IfPresent()
  @Currency()
  currency?: string;
}

export class LineItemView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  deal_id!: string;
  /** The product sold; it still names a product that was deleted later, whose name and prices the line keeps. */
  @ApiProperty({ type: String, nullable: true })
  product_id!: string | null;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: Number })
  quantity!: number;
  /** Cents. */
  @ApiProperty({ type: Number })
  unit_price!: number;
  @ApiProperty({ type: Number })
  discount_percent!: number;
  @ApiProperty({ type: String })
  currency!: string;
  /** quantity × unit_price × (1 − discount_percent / 100), in cents, rounded half up (docs/products.md). */
  @ApiProperty({ type: Number })
  amount!: number;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

/** Data of line_item.created and line_item.deleted: the line as it was shown. */
export class LineItemEventData extends LineItemView {
  @ApiProperty({ type: String })
  line_item_id!: string;
}

/** Data of line_item.updated: the fields whose values changed, before and after. */
export class LineItemUpdatedData extends FieldChanges {
  @ApiProperty({ type: String })
  line_item_id!: string;
  @ApiProperty({ type: String })
  deal_id!: string;
}
