import type { DeliveryStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One attempt to deliver one event to one subscription: `pending` while the request is in flight. */
@Entity({ name: 'deliveries' })
export class Delivery {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId!: string;

  @Column({ name: 'event_id', type: 'text' })
  eventId!: string;

  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ type: 'text' })
  status!: DeliveryStatus;

  @Column({ name: 'http_status', type: 'integer', nullable: true })
  httpStatus!: number | null;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs!: number | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
