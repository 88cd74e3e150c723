import { Column, Entity, PrimaryColumn } from 'typeorm';
import { WorkItemRecord } from '../shared/work-item-record';

@Entity({ name: 'tasks' })
export class Task extends WorkItemRecord {
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

  @Column({ name: 'owner_id', type: 'text', nullable: true })
  ownerId!: string | null;
}
