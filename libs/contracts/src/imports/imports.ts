import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIn } from 'class-validator';
import { SlugKeptBy, SlugWith, slugsWith } from '../objects/registry';

/** Objects `POST /imports` can load: contacts upsert by email, companies by domain, deals are created. */
export type ImportObject = SlugWith<'importable'>;
export const IMPORT_OBJECTS: readonly ImportObject[] = slugsWith('importable');
export const IMPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
/** receiving: the upload is being staged; queued/running: rows are applied in batches; then completed or failed. */
export const IMPORT_STATUSES = ['receiving', 'queued', 'running', 'completed', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

export const ImportLimits = {
  /** Largest upload, in bytes. */
  bytes: 50 * 1024 * 1024,
  /** Largest single row (a CSV record or an NDJSON line), in bytes. */
  rowBytes: 256 * 1024,
  /** Per-row errors kept on the job; the count goes on. */
  errors: 1000,
  /** Rows staged per message from the gateway, and at most this many bytes of them. */
  chunkRows: 1000,
  chunkBytes: 512 * 1024,
  /** Rows applied per transaction. */
  batchRows: 200,
  /** Deal rows per batch: each is checked against the contacts service and sent to the deals service in one message. */
  dealBatchRows: 50,
} as const;

export class CreateImportQuery {
  @IsDefined({ message: 'object is required' })
  @IsIn(IMPORT_OBJECTS, { message: `object must be one of ${IMPORT_OBJECTS.join(', ')}` })
  object!: ImportObject;
}

/**
 * One staged row: its line in the upload (1-based; a CSV header is line 1) and its values as parsed, or
 * the reason the gateway could not parse it (then the row is reported as failed, never applied).
 */
export interface ImportRowInput {
  line: number;
  values?: Record<string, unknown>;
  error?: { code: string; message: string };
}

export interface CreateImportRequest {
  object: ImportObject;
  format: ImportFormat;
}

export interface AppendImportRowsRequest {
  rows: ImportRowInput[];
}

export interface FailImportRequest {
  reason: string;
}

export class ImportRowError {
  @ApiProperty({ type: Number, description: 'Line of the upload (1-based; the CSV header is line 1).' })
  line!: number;
  @ApiProperty({ type: String, nullable: true, description: 'The field at fault, when one is.' })
  field!: string | null;
  @ApiProperty({ type: String })
  code!: string;
  @ApiProperty({ type: String })
  message!: string;
}

/**
 * Which rows created, updated or were refused says which records existed before (a contact row updates
 * when its email is taken; a company row without a name is refused only when no company has its domain):
 * a caller that may write an object but not read it sees only how far the import got.
 */
const SHOWN_WITH_READ = "Shown only to a caller with read on the import's object (docs/imports.md).";

export class ImportCounts {
  @ApiProperty({ type: Number, description: 'Rows received.' })
  total!: number;
  @ApiProperty({ type: Number, description: 'Rows applied or rejected so far.' })
  processed!: number;
  @ApiProperty({ type: Number, required: false, description: `Rows that made a record. ${SHOWN_WITH_READ}` })
  created?: number;
  @ApiProperty({ type: Number, required: false, description: `Rows that updated a matching record. ${SHOWN_WITH_READ}` })
  updated?: number;
  @ApiProperty({ type: Number, required: false, description: `Rows rejected; the first errors are listed in \`errors\`. ${SHOWN_WITH_READ}` })
  failed?: number;
  @ApiProperty({
    type: Number,
    required: false,
    description: `Rows left out on purpose (an erased person's suppressed email, docs/privacy.md); the first are listed in \`warnings\`. ${SHOWN_WITH_READ}`,
  })
  skipped?: number;
}

export class ImportView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ enum: IMPORT_OBJECTS })
  object!: ImportObject;
  @ApiProperty({ enum: IMPORT_FORMATS })
  format!: ImportFormat;
  @ApiProperty({ enum: IMPORT_STATUSES })
  status!: ImportStatus;
  @ApiProperty({ type: () => ImportCounts })
  counts!: ImportCounts;
  @ApiProperty({ type: () => [ImportRowError], required: false, description: `The first ${ImportLimits.errors} row errors, by line. ${SHOWN_WITH_READ}` })
  errors?: ImportRowError[];
  @ApiProperty({
    type: () => [ImportRowError],
    required: false,
    description: `The first ${ImportLimits.errors} skipped rows and why, by line. ${SHOWN_WITH_READ}`,
  })
  warnings?: ImportRowError[];
  @ApiProperty({ type: String, nullable: true, description: 'Why the whole import failed (a broken upload), else null.' })
  failure_reason!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  completed_at!: string | null;
}

/** An `import.completed` event's counts: all of them, as the event is read with `imports:read` (docs/imports.md). */
export class ImportEventCounts {
  @ApiProperty({ type: Number, description: 'Rows received.' })
  total!: number;
  @ApiProperty({ type: Number, description: 'Rows applied or rejected.' })
  processed!: number;
  @ApiProperty({ type: Number })
  created!: number;
  @ApiProperty({ type: Number })
  updated!: number;
  @ApiProperty({ type: Number })
  failed!: number;
}

export class ImportCompletedData {
  @ApiProperty({ type: String })
  import_id!: string;
  @ApiProperty({ enum: IMPORT_OBJECTS })
  object!: ImportObject;
  @ApiProperty({ enum: ['completed', 'failed'] })
  status!: 'completed' | 'failed';
  @ApiProperty({ type: () => ImportEventCounts })
  counts!: ImportEventCounts;
}

/** A batch of deal rows the import job asks the deals service to apply (Ops.dealsInternal.importBatch). */
export interface ImportDealsBatchRequest {
  import_id: string;
  /** The object the rows are records of, one the deals service keeps; deals when left out (a caller of an earlier build). */
  object?: ImportObject & SlugKeptBy<'deals'>;
  /** Sequence number of the first row: with import_id, it names the batch, which is applied at most once. */
  first_seq: number;
  format: ImportFormat;
  rows: Array<{ line: number; values: Record<string, unknown> }>;
}

export interface ImportDealsBatchReply {
  created: number;
  failed: number;
  errors: ImportRowError[];
}
