import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One placement of a deal into a stage. Stage ids are kept as text: history outlives deleted stages. */
@Entity({ name: 'stage_history' })
export class StageHistory {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'deal_id', type: 'text' })
  dealId!: string;

  @Column({ name: 'from_stage_id', type: 'text', nullable: true })
  fromStageId!: string | null;

  @Column({ name: 'to_stage_id', type: 'text' })
  toStageId!: string;

  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt!: Date;

  @Column({ name: 'changed_by', type: 'text' })
  changedBy!: string;

  @Column({ name: 'changed_by_key_id', type: 'text', nullable: true })
  changedByKeyId!: string | null;
}
