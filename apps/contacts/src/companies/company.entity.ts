import { NOW_MS } from '../shared/sql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'companies' })
export class Company {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text', nullable: true })
  domain!: string | null;

  @Column({ type: 'text', nullable: true })
  industry!: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  /** Values of the custom fields defined for this object (see docs/schema.md). */
  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}
