import { BuiltInRecord } from '@crm/records';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from '../deals/deal.entity';

@Entity({ name: 'products' })
export class Product extends BuiltInRecord {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  /** Unique whatever its case (the index is on lower(sku)). */
  @Column({ type: 'text', nullable: true })
  sku!: string | null;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  /** Cents. */
  @Column({ type: 'bigint', transformer: bigintAsNumber })
  price!: number;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  @Column({ type: 'boolean' })
  active!: boolean;
}
