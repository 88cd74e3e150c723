import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** This service's copy of one domain event; `body` is the exact JSON every subscriber receives. */
@Entity({ name: 'webhook_events' })
export class WebhookEvent {
  /** A bigserial; PostgreSQL's bigint arrives as a string, and positions stay far below 2^53. */
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  position!: string;

  @Column({ type: 'text', unique: true })
  id!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'text' })
  body!: string;

  /** The `traceparent` the event arrived with, when the change was traced; each delivery is its child. */
  @Column({ name: 'trace_context', type: 'text', nullable: true })
  traceContext!: string | null;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;
}
