import type { ImportFormat, ImportObject, ImportRowError, ImportStatus, RequestContext } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Timestamped } from '@crm/records';

@Entity({ name: 'imports' })
export class Import extends Timestamped {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  object!: ImportObject;

  @Column({ type: 'text' })
  format!: ImportFormat;

  @Column({ type: 'text' })
  status!: ImportStatus;

  /** Who asked for it: rows are applied as that caller's writes. */
  @Column({ name: 'request_context', type: 'jsonb' })
  requestContext!: RequestContext;

  @Column({ type: 'integer', default: 0 })
  total!: number;

  /** Rows with a lower sequence number are applied (or rejected); the job resumes from here. */
  @Column({ name: 'next_seq', type: 'integer', default: 0 })
  nextSeq!: number;

  @Column({ type: 'integer', default: 0 })
  created!: number;

  @Column({ type: 'integer', default: 0 })
  updated!: number;

  @Column({ type: 'integer', default: 0 })
  failed!: number;

  @Column({ type: 'jsonb', default: () => `'[]'::jsonb` })
  errors!: ImportRowError[];

  /** Rows left out on purpose (an erased person's suppressed email), each with a warning. */
  @Column({ type: 'integer', default: 0 })
  skipped!: number;

  @Column({ type: 'jsonb', default: () => `'[]'::jsonb` })
  warnings!: ImportRowError[];

  @Column({ name: 'failure_reason', type: 'text', nullable: true })
  failureReason!: string | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}

/** A staged row: its values as parsed, or the reason the gateway could not use it. */
@Entity({ name: 'import_rows' })
export class ImportRow {
  @PrimaryColumn({ name: 'import_id', type: 'text' })
  importId!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'integer' })
  line!: number;

  @Column({ type: 'jsonb', nullable: true })
  values!: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: { code: string; message: string } | null;
}
