import { Timestamped } from '@crm/records';
import { Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';
import { bigintAsNumber } from '../deals/deal.entity';

/** numeric arrives from pg as a string ("2.5000"); its scale (4 or 2 digits) is exact in a double. */
const numericAsNumber: ValueTransformer = {
  to: (value: number | undefined) => value,
  from: (value: string) => Number(value),
};

@Entity({ name: 'line_items' })
export class LineItem extends Timestamped {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'deal_id', type: 'text' })
  dealId!: string;

  /** No foreign key: a deleted product's lines keep its id, name and prices. */
  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId!: string | null;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'numeric', precision: 14, scale: 4, transformer: numericAsNumber })
  quantity!: number;

  @Column({ name: 'unit_price', type: 'bigint', transformer: bigintAsNumber })
  unitPrice!: number;

  @Column({ name: 'discount_percent', type: 'numeric', precision: 5, scale: 2, transformer: numericAsNumber })
  discountPercent!: number;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  /** Cents: lineAmount() of the columns above, kept with them. */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  amount!: number;
}
