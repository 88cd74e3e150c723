import type { StageType } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'stages' })
export class Stage {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'pipeline_id', type: 'text' })
  pipelineId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  type!: StageType;

  @Column({ type: 'integer' })
  position!: number;

  @Column({ type: 'text', nullable: true })
  color!: string | null;

  /** Null when the client gave none: the presented value is then inferred from the stage's place. */
  @Column({ type: 'double precision', nullable: true })
  probability!: number | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
