import { Column, Entity, PrimaryColumn } from 'typeorm';
import { WorkItemRecord } from '../shared/work-item-record';

@Entity({ name: 'activities' })
export class Activity extends WorkItemRecord {
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
}
