import { ExportCompression, ExportFileView, ExportFormat, ExportObject, ExportProgressView, ExportStatus } from '@crm/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An export (docs/exports.md); defaults, checks and indexes are the migration's. */
@Entity({ name: 'exports' })
export class ExportRecord {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'key_id', type: 'text', nullable: true })
  keyId!: string | null;

  @Column({ type: 'text' })
  status!: ExportStatus;

  @Column({ type: 'text', array: true })
  objects!: ExportObject[];

  @Column({ type: 'text' })
  format!: ExportFormat;

  /** The body's filter and fields by object, and its compression (kept here: the table has no column for it). */
  @Column({ type: 'jsonb' })
  request!: { filter?: Record<string, Record<string, unknown>>; fields?: Record<string, string[]>; compression?: ExportCompression };

  /** What the key that made it may read (null: everything): the export reads rows as that key would. */
  @Column({ type: 'text', array: true, nullable: true })
  readable!: string[] | null;

  /** The log position the export stands at; bigint as text. */
  @Column({ name: 'as_of', type: 'bigint', nullable: true })
  asOf!: string | null;

  @Column({ type: 'jsonb', default: {} })
  progress!: Partial<Record<ExportObject, ExportProgressView>>;

  @Column({ type: 'jsonb', default: [] })
  files!: ExportFileView[];

  @Column({ type: 'jsonb', nullable: true })
  error!: { code: string; message: string } | null;

  /** How many times a replica started it: a run whose attempt is no longer the row's was taken over. */
  @Column({ type: 'integer', default: 0 })
  attempt!: number;

  @Column({ name: 'heartbeat_at', type: 'timestamptz', nullable: true })
  heartbeatAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;
}

/** A piece of an export's file: ExportLimits.pieceBytes each, the last one shorter. */
@Entity({ name: 'export_pieces' })
export class ExportPiece {
  @PrimaryColumn({ name: 'export_id', type: 'text' })
  exportId!: string;

  @PrimaryColumn({ type: 'text' })
  file!: string;

  @PrimaryColumn({ type: 'integer' })
  seq!: number;

  @Column({ type: 'bytea' })
  data!: Buffer;
}
