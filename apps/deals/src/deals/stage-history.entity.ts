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

  /** When the deal entered from_stage_id, i.e. the start of the stay this row ends; filled by a trigger (see its migration). */
  @Column({ name: 'stay_started_at', type: 'timestamptz', nullable: true })
  stayStartedAt!: Date | null;

  /**
   * The pipeline report's flow columns, kept by a trigger on every write path (see their migration): the stages the
   * deal entered after this row, and its last earlier entry into the same stage. Never written or read through here.
   */
  @Column({ name: 'later_stage_ids', type: 'text', array: true, default: () => "'{}'", select: false, insert: false, update: false })
  laterStageIds?: string[];

  @Column({ name: 'previous_entry_at', type: 'timestamptz', nullable: true, select: false, insert: false, update: false })
  previousEntryAt?: Date | null;

  /** The length in days of the stay this row ends (the pipeline report's days in stage), stamped by the same trigger. Never written or read through here. */
  @Column({ name: 'stay_days', type: 'float8', nullable: true, select: false, insert: false, update: false })
  stayDays?: number | null;

  @Column({ name: 'changed_by', type: 'text' })
  changedBy!: string;

  @Column({ name: 'changed_by_key_id', type: 'text', nullable: true })
  changedByKeyId!: string | null;
}
