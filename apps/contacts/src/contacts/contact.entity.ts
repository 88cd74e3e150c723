import { Column, Entity, PrimaryColumn } from 'typeorm';
import { BuiltInRecord } from '@crm/records';

@Entity({ name: 'contacts' })
export class Contact extends BuiltInRecord {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** Stored lowercased; unique through an index on lower(email). */
  @Column({ type: 'text' })
  email!: string;

  @Column({ name: 'first_name', type: 'text', nullable: true })
  firstName!: string | null;

  @Column({ name: 'last_name', type: 'text', nullable: true })
  lastName!: string | null;

  @Column({ type: 'text', nullable: true })
  phone!: string | null;

  @Column({ type: 'text', nullable: true })
  title!: string | null;

  @Column({ type: 'text', nullable: true })
  stage!: string | null;

  @Column({ type: 'text', nullable: true })
  source!: string | null;

  @Column({ name: 'source_detail', type: 'text', nullable: true })
  sourceDetail!: string | null;

  @Column({ name: 'company_id', type: 'text', nullable: true })
  companyId!: string | null;

  @Column({ name: 'owner_id', type: 'text', nullable: true })
  ownerId!: string | null;

  @Column({ name: 'icp_score', type: 'integer', nullable: true })
  icpScore!: number | null;

  @Column({ name: 'icp_score_reason', type: 'text', nullable: true })
  icpScoreReason!: string | null;

  @Column({ name: 'icp_scored_at', type: 'timestamptz', nullable: true })
  icpScoredAt!: Date | null;

  /** Set by the outbox step of every write that records an event about it (docs/exports.md); bigint as text. */
  @Column({ type: 'bigint', default: 0 })
  version!: string;
}
