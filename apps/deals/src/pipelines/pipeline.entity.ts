import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Stage } from './stage.entity';

@Entity({ name: 'pipelines' })
export class Pipeline {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'is_default', type: 'boolean' })
  isDefault!: boolean;

  @Column({ type: 'jsonb' })
  /** Arbitrary client JSON (limits in docs/deals.md). */
  metadata!: Record<string, any>;

  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, any>;

  /** Filled in by the service when a response needs them; not a column. */
  stages?: Stage[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
