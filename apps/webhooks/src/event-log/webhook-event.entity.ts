import { Column, Entity, PrimaryColumn } from 'typeorm';

/** This service's copy of one domain event; `body` is the exact JSON every subscriber receives. */
@Entity({ name: 'webhook_events' })
export class WebhookEvent {
  @PrimaryColumn({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  position!: number;

  @Column({ type: 'text', unique: true })
  id!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'text' })
  body!: string;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;
}
