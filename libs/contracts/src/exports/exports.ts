import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsDefined, IsIn, IsObject, IsOptional } from 'class-validator';

/** Objects an export copies (docs/exports.md): those whose events carry the record's version. */
export const EXPORT_OBJECTS = ['contacts', 'deals'] as const;
export type ExportObject = (typeof EXPORT_OBJECTS)[number];
export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_COMPRESSIONS = ['gzip'] as const;
export type ExportCompression = (typeof EXPORT_COMPRESSIONS)[number];

/** A file's name: its object, its format, and `.gz` when compressed (`contacts.csv.gz`). */
export function exportFileName(object: ExportObject, format: ExportFormat, compression: ExportCompression | null): string {
  return `${object}.${format}${compression === 'gzip' ? '.gz' : ''}`;
}

/** The media types files are served with: a compressed file as the gzip file it is, not decoded on the way. */
export const EXPORT_FILE_TYPES = { ndjson: 'application/x-ndjson', csv: 'text/csv', gzip: 'application/gzip' } as const;

/** The media type a file is served with, from its name. */
export function exportFileType(name: string): string {
  if (name.endsWith('.gz')) return EXPORT_FILE_TYPES.gzip;
  return name.endsWith('.csv') ? `${EXPORT_FILE_TYPES.csv}; charset=utf-8` : EXPORT_FILE_TYPES.ndjson;
}
/** queued: waiting for a replica; running: rows are being written; then completed or failed. */
export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const ExportLimits = {
  /** Rows read from the owning service per request (the query's largest page). */
  pageRows: 200,
  /** Bytes of a file stored per piece, and the most one request for a file's bytes answers. */
  pieceBytes: 256 * 1024,
} as const;

/**
 * The records that carry a version, by the service that keeps them (docs/exports.md, "The handoff rule"):
 * the events of these types name the record by `id`, and the outbox stamps each with the version it draws
 * for it. Every change of a record's fields is reported by one of these types.
 */
export const VERSIONED_RECORDS: Readonly<Record<string, readonly { table: string; types: readonly string[]; id: string }[]>> = {
  contacts: [{ table: 'contacts', types: ['contact.created', 'contact.updated'], id: 'contact_id' }],
  deals: [{ table: 'deals', types: ['deal.created', 'deal.updated'], id: 'deal_id' }],
};

export class CreateExportDto {
  @IsDefined({ message: 'objects is required' })
  @IsArray({ message: 'objects must be an array' })
  @ArrayNotEmpty({ message: 'objects must name at least one object' })
  @ArrayMaxSize(EXPORT_OBJECTS.length, { message: `objects may name at most ${EXPORT_OBJECTS.length} objects` })
  @ArrayUnique({ message: 'objects must not name an object twice' })
  @IsIn(EXPORT_OBJECTS, { each: true, message: `objects must be among ${EXPORT_OBJECTS.join(', ')}` })
  @ApiProperty({ type: [String], enum: EXPORT_OBJECTS, description: 'The objects to copy.' })
  objects!: ExportObject[];

  @IsOptional()
  @IsObject({ message: 'filter must be an object of filters by object' })
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Per object, the filter of POST /<object>/query.' })
  filter?: Partial<Record<ExportObject, Record<string, unknown>>>;

  @IsOptional()
  @IsObject({ message: 'fields must be an object of field lists by object' })
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: "Per object, the query's fields (default: the item a query without fields answers).",
  })
  fields?: Partial<Record<ExportObject, string[]>>;

  @IsOptional()
  @IsIn(EXPORT_FORMATS, { message: `format must be one of ${EXPORT_FORMATS.join(', ')}` })
  @ApiPropertyOptional({ type: String, enum: EXPORT_FORMATS, default: 'ndjson' })
  format?: ExportFormat;

  @IsOptional()
  @IsIn(EXPORT_COMPRESSIONS, { message: `compression must be one of ${EXPORT_COMPRESSIONS.join(', ')} or left out` })
  @ApiPropertyOptional({ type: String, enum: EXPORT_COMPRESSIONS, description: 'gzip: each file is one gzip stream (`contacts.csv.gz`). Default: none.' })
  compression?: ExportCompression;
}

export class ExportFileView {
  @ApiProperty({ type: String, description: 'The name GET /exports/:id/files/:name takes.' })
  name!: string;
  @ApiProperty({ type: String, enum: EXPORT_OBJECTS })
  object!: ExportObject;
  @ApiProperty({ type: Number })
  rows!: number;
  @ApiProperty({ type: Number })
  bytes!: number;
  @ApiProperty({ type: String, description: 'SHA-256 of the file, hex.' })
  sha256!: string;
}

export interface ExportProgressView {
  rows: number;
}

export class ExportErrorView {
  @ApiProperty({ type: String })
  code!: string;
  @ApiProperty({ type: String })
  message!: string;
}

export class ExportView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String, enum: EXPORT_STATUSES })
  status!: ExportStatus;
  @ApiProperty({ type: [String], enum: EXPORT_OBJECTS })
  objects!: ExportObject[];
  @ApiProperty({ type: String, enum: EXPORT_FORMATS })
  format!: ExportFormat;
  @ApiProperty({ type: String, enum: EXPORT_COMPRESSIONS, nullable: true })
  compression!: ExportCompression | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'An event-log cursor: read GET /events?cursor=<as_of> after applying the files (docs/exports.md). Set once the export starts.',
  })
  as_of!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Rows written so far, by object: `{"contacts": {"rows": 1200}}`.' })
  progress!: Partial<Record<ExportObject, ExportProgressView>>;
  @ApiProperty({ type: [ExportFileView], description: 'The files, once completed.' })
  files!: ExportFileView[];
  @ApiProperty({ type: ExportErrorView, nullable: true })
  error!: ExportErrorView | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  completed_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the export and its files are deleted.' })
  expires_at!: string | null;
}

/** One page of an object's rows for an export, in id order, each with its version. */
export interface ExportPageRequest {
  object: ExportObject;
  filter?: Record<string, unknown>;
  fields?: string[];
  cursor?: string;
  limit: number;
}

/** A piece of a file, for the gateway that streams it: `data` is base64, at most ExportLimits.pieceBytes. */
export interface ReadExportFileRequest {
  id: string;
  name: string;
  offset: number;
  length: number;
}

export interface ReadExportFileReply {
  bytes: number;
  rows: number;
  sha256: string;
  data: string;
}
