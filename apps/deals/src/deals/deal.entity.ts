import type { DealSource, DealStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** bigint arrives from pg as a string; values are capped at 2^53 - 1, so a number is exact. */
export const bigintAsNumber: ValueTransformer = {
  to: (value: number | undefined) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

@Entity({ name: 'deals' })
export class Deal {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ name: 'pipeline_id', type: 'text' })
  pipelineId!: string;

  @Column({ name: 'stage_id', type: 'text' })
  stageId!: string;

  @Column({ name: 'contact_id', type: 'text', nullable: true })
  contactId!: string | null;

  @Column({ name: 'company_id', type: 'text', nullable: true })
  companyId!: string | null;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  value!: number;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  /** Whether value is the sum of the deal's line items' amounts, kept with each line write (docs/products.md). */
  @Column({ name: 'value_from_line_items', type: 'boolean', default: false })
  valueFromLineItems!: boolean;

  @Column({ type: 'text' })
  status!: DealStatus;

  @Column({ name: 'expected_close', type: 'timestamptz', nullable: true })
  expectedClose!: Date | null;

  @Column({ name: 'owner_id', type: 'text', nullable: true })
  ownerId!: string | null;

  @Column({ type: 'text', nullable: true })
  source!: DealSource | null;

  @Column({ type: 'jsonb' })
  /** Arbitrary client JSON (limits in docs/deals.md). */
  metadata!: Record<string, any>;

  @Column({ name: 'custom_fields', type: 'jsonb', default: () => `'{}'::jsonb` })
  customFields!: Record<string, any>;

  @Column({ name: 'loss_reason', type: 'text', nullable: true })
  lossReason!: string | null;

  @Column({ name: 'stage_entered_at', type: 'timestamptz' })
  stageEnteredAt!: Date;

  @Column({ name: 'last_activity_at', type: 'timestamptz', nullable: true })
  lastActivityAt!: Date | null;

  /** When trigger.deal.stale was last emitted for the current stretch of inactivity. */
  @Column({ name: 'stale_notified_at', type: 'timestamptz', nullable: true })
  staleNotifiedAt!: Date | null;

  /** When the status last became won or lost; null while open. Stamped by a trigger on every write (see its migration). */
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  /** Set by the outbox step of every write that records an event about it (docs/exports.md); bigint as text. */
  @Column({ type: 'bigint', default: 0 })
  version!: string;
}
