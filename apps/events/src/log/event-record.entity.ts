import { ChangeActor, ChangeVia } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'events' })
export class EventRecord {
  /** bigint arrives from pg as a string; it is parsed where positions are compared. */
  @PrimaryColumn({ type: 'bigint' })
  position!: string;

  @Column({ type: 'text', unique: true })
  id!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  @Column({ type: 'jsonb', nullable: true })
  actor!: ChangeActor | null;

  @Column({ type: 'text', nullable: true })
  via!: ChangeVia | null;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  @Column({ type: 'jsonb' })
  data!: Record<string, unknown>;

  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt!: Date;
}
