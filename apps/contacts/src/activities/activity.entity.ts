import { NOW_MS } from '../shared/sql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'activities' })
export class Activity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'text' })
  status!: string;

  @Column({ type: 'text', nullable: true })
  subject!: string | null;

  @Column({ type: 'text', nullable: true })
  body!: string | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  @Column({ name: 'contact_id', type: 'text', nullable: true })
  contactId!: string | null;

  @Column({ name: 'deal_id', type: 'text', nullable: true })
  dealId!: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}
