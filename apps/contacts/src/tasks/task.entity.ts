import { NOW_MS } from '../shared/sql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'tasks' })
export class Task {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text' })
  priority!: string;

  @Column({ type: 'text' })
  status!: string;

  @Column({ name: 'due_at', type: 'timestamptz', nullable: true })
  dueAt!: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  @Column({ name: 'contact_id', type: 'text', nullable: true })
  contactId!: string | null;

  @Column({ name: 'deal_id', type: 'text', nullable: true })
  dealId!: string | null;

  @Column({ name: 'owner_id', type: 'text', nullable: true })
  ownerId!: string | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => NOW_MS })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => NOW_MS })
  updatedAt!: Date;
}
