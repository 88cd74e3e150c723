import { DomainError } from '@crm/common';
import { LineItemLimits, LineItemView } from '@crm/contracts';
import { LineItem } from './line-item.entity';

/** A decimal as an integer of `scale` digits after the point, read from its shortest decimal form (2.5 -> 25000 at 4). */
function scaled(value: number, scale: number): bigint {
  const [whole, fraction = ''] = String(value).split('.');
  return BigInt(whole + fraction.padEnd(scale, '0').slice(0, scale));
}

/**
 * A line's amount in cents: quantity × unit_price × (100 − discount_percent) / 100, computed exactly in
 * integers (quantity to 4 decimals, the discount to 2) and rounded once, half up (0.5 cent goes up), as
 * docs/products.md states. A 400 when it is past the largest exact cent count.
 */
export function lineAmount(quantity: number, unitPrice: number, discountPercent: number): number {
  const q = LineItemLimits.quantityDecimals;
  const d = LineItemLimits.discountDecimals;
  const numerator = scaled(quantity, q) * BigInt(unitPrice) * (100n * 10n ** BigInt(d) - scaled(discountPercent, d));
  const denominator = 10n ** BigInt(q) * 100n * 10n ** BigInt(d);
  const amount = (2n * numerator + denominator) / (2n * denominator);
  if (amount > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw DomainError.invalid('quantity', `The line's amount would exceed ${Number.MAX_SAFE_INTEGER} cents; lower its quantity or unit_price.`);
  }
  return Number(amount);
}

export function presentLineItem(line: LineItem): LineItemView {
  return {
    id: line.id,
    deal_id: line.dealId,
    product_id: line.productId,
    name: line.name,
    quantity: line.quantity,
    unit_price: line.unitPrice,
    discount_percent: line.discountPercent,
    currency: line.currency,
    amount: line.amount,
    created_at: line.createdAt.toISOString(),
    updated_at: line.updatedAt.toISOString(),
  };
}
