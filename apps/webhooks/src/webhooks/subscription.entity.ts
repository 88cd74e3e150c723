import type { WebhookStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** bigint positions come back from PostgreSQL as strings; they stay far below 2^53. */
const bigintAsNumber = { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

/**
 * A webhook subscription and its delivery cursor. `bookmark` is the position (in webhook_events) of
 * the last event delivered or given up on; `retry_*` describe the event after it while it is failing;
 * `lease_*` name the replica currently delivering to it.
 */
@Entity({ name: 'subscriptions' })
export class Subscription {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  url!: string;

  /** Sealed with WEBHOOKS_SECRET_KEYS (see SecretKeyring), like previous_secret. */
  @Column({ type: 'text' })
  secret!: string;

  /** The secret a PATCH replaced; deliveries are signed with it too until previous_secret_expires_at. */
  @Column({ name: 'previous_secret', type: 'text', nullable: true })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt!: Date | null;

  @Column({ name: 'event_types', type: 'text', array: true, nullable: true })
  eventTypes!: string[] | null;

  /** Checked against event_types when set (see WebhooksService); null delivers every event of those types. */
  @Column({ type: 'jsonb', nullable: true })
  filter!: Record<string, unknown> | null;

  /**
   * The position of the next event after the bookmark that the filter was found to hold for: the attempt
   * for it may be prepared without testing it again. Any other next event is tested first (see EventScreen).
   */
  @Column({ name: 'screened_position', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  screenedPosition!: number | null;

  @Column({ type: 'text' })
  status!: WebhookStatus;

  @Column({ name: 'failure_count', type: 'integer', default: 0 })
  failureCount!: number;

  @Column({ name: 'last_delivered_at', type: 'timestamptz', nullable: true })
  lastDeliveredAt!: Date | null;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  @Column({ type: 'bigint', default: 0, transformer: bigintAsNumber })
  bookmark!: number;

  @Column({ name: 'cursor_revision', type: 'integer', default: 0 })
  cursorRevision!: number;

  @Column({ name: 'retry_position', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  retryPosition!: number | null;

  @Column({ name: 'retry_count', type: 'integer', default: 0 })
  retryCount!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'lease_token', type: 'text', nullable: true })
  leaseToken!: string | null;

  @Column({ name: 'lease_expires_at', type: 'timestamptz', nullable: true })
  leaseExpiresAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
