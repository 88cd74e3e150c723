import { CursorCodec, DomainError, ErrorCode, IdPrefix, isId, newId } from '@crm/common';
import {
  CreateExportDto,
  EXPORT_OBJECTS,
  ExportLimits,
  ExportObject,
  ExportView,
  FieldIssue,
  forbiddenRead,
  ReadExportFileReply,
  ReadExportFileRequest,
  RequestContext,
  unreadableObject,
} from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EVENTS_LIST } from '../log/events.service';
import { EVENTS_SETTINGS, EventsSettings } from '../log/events.settings';
import { ExportRecord } from './export.entity';
import { readRange } from './export-files';
import { ExportPages } from './export-pages';

/** Starts, shows and reads exports (docs/exports.md); ExportRunner runs them. */
@Injectable()
export class ExportsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly pages: ExportPages,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
  ) {}

  /**
   * Checks the body against each object's query (a first page of one row), so a bad filter or field is a
   * 400 naming it before anything is queued, then queues the export unless its key has as many unfinished
   * as it may: one transaction, locked per key, so two requests at once cannot both pass the count.
   */
  async create(ctx: RequestContext, body: CreateExportDto): Promise<{ data: ExportView }> {
    const request = checkedRequest(body);
    for (const object of body.objects) {
      await this.pages.page(ctx, object, { filter: request.filter?.[object], fields: request.fields?.[object], limit: 1 }).catch((err) => {
        throw underObject(err, object);
      });
    }
    const row = await this.dataSource.transaction(async (m) => {
      const key = ctx.key_id ?? ctx.subject ?? 'anonymous';
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm:exports:${key}`]);
      const [{ unfinished }] = await m.query(`SELECT count(*)::int AS unfinished FROM exports WHERE key_id = $1 AND status IN ('queued', 'running')`, [key]);
      if (unfinished >= this.settings.exportsMaxRunningPerKey) {
        throw DomainError.conflict(
          `This key has ${unfinished} exports queued or running, the most it may (EXPORTS_MAX_RUNNING_PER_KEY); wait for one to finish.`,
        );
      }
      const [created] = await m.query(
        `INSERT INTO exports (id, key_id, status, objects, format, request, readable) VALUES ($1, $2, 'queued', $3, $4, $5, $6) RETURNING *`,
        [newId(IdPrefix.Export), key, body.objects, body.format ?? 'ndjson', JSON.stringify(request), ctx.readable ?? null],
      );
      return m.getRepository(ExportRecord).create(hydrateExport(created));
    });
    return { data: this.present(row) };
  }

  async get(ctx: RequestContext, id: string): Promise<{ data: ExportView }> {
    return { data: this.present(await this.readable(ctx, id)) };
  }

  /** A piece of a completed export's file, for the gateway streaming it; length 0 answers the file's size alone. */
  async read(ctx: RequestContext, { id, name, offset, length }: ReadExportFileRequest): Promise<ReadExportFileReply> {
    const record = await this.readable(ctx, id);
    const file = record.status === 'completed' ? record.files.find((f) => f.name === name) : undefined;
    if (!file) throw DomainError.notFound('export file', `${id}/${name}`);
    const start = Math.max(0, Math.min(offset, file.bytes));
    const count = Math.max(0, Math.min(length, ExportLimits.pieceBytes, file.bytes - start));
    const data = await readRange(this.dataSource, id, name, start, count);
    return { bytes: file.bytes, rows: file.rows, sha256: file.sha256, data: data.toString('base64') };
  }

  /** The export, when the caller may read every object it holds (it shows their records); another caller is told which permission it lacks. */
  private async readable(ctx: RequestContext, id: string): Promise<ExportRecord> {
    const record = isId(id, IdPrefix.Export) ? await this.dataSource.getRepository(ExportRecord).findOneBy({ id }) : null;
    if (!record || (record.expiresAt && record.expiresAt.getTime() <= Date.now())) throw DomainError.notFound('export', id);
    const missing = unreadableObject(ctx.readable, record.objects);
    if (missing) throw forbiddenRead(missing, 'reading this export');
    return record;
  }

  present(r: ExportRecord): ExportView {
    return {
      id: r.id,
      status: r.status,
      objects: r.objects,
      format: r.format,
      compression: r.request.compression ?? null,
      as_of: r.asOf === null ? null : this.cursors.encode(EVENTS_LIST, Number(r.asOf)),
      progress: r.progress,
      files: r.status === 'completed' ? r.files : [],
      error: r.error,
      created_at: r.createdAt.toISOString(),
      completed_at: r.completedAt?.toISOString() ?? null,
      expires_at: r.expiresAt?.toISOString() ?? null,
    };
  }
}

/** A raw row of `exports` as the entity names its properties. */
export function hydrateExport(row: Record<string, unknown>): Partial<ExportRecord> {
  return {
    id: row.id as string,
    keyId: row.key_id as string | null,
    status: row.status as ExportRecord['status'],
    objects: row.objects as ExportObject[],
    format: row.format as ExportRecord['format'],
    request: row.request as ExportRecord['request'],
    readable: row.readable as string[] | null,
    asOf: row.as_of as string | null,
    progress: row.progress as ExportRecord['progress'],
    files: row.files as ExportRecord['files'],
    error: row.error as ExportRecord['error'],
    attempt: row.attempt as number,
    heartbeatAt: row.heartbeat_at as Date | null,
    createdAt: row.created_at as Date,
    completedAt: row.completed_at as Date | null,
    expiresAt: row.expires_at as Date | null,
  };
}

/** The body's filter and fields, each keyed by an object the export names, and its compression. */
function checkedRequest(body: CreateExportDto): ExportRecord['request'] {
  const issues: FieldIssue[] = [];
  const perObject = (member: 'filter' | 'fields', check: (value: unknown) => boolean, shape: string) => {
    for (const [object, value] of Object.entries(body[member] ?? {})) {
      if (!(body.objects as string[]).includes(object)) {
        const known = (EXPORT_OBJECTS as readonly string[]).includes(object);
        issues.push({
          field: `${member}.${object}`,
          code: 'invalid_value',
          message: known
            ? `${member}.${object} names an object the export does not list in objects`
            : `'${object}' is not an object an export can copy (${EXPORT_OBJECTS.join(', ')})`,
        });
      } else if (!check(value)) issues.push({ field: `${member}.${object}`, code: 'invalid_value', message: `${member}.${object} must be ${shape}` });
    }
  };
  perObject('filter', (v) => typeof v === 'object' && v !== null && !Array.isArray(v), "an object (the query's filter)");
  perObject('fields', (v) => Array.isArray(v) && v.length > 0 && v.every((f) => typeof f === 'string'), 'a non-empty array of field paths');
  if (issues.length) throw new DomainError(ErrorCode.ValidationFailed, issues.map((i) => i.message).join(' '), issues);
  return {
    ...(body.filter ? { filter: body.filter as Record<string, Record<string, unknown>> } : {}),
    ...(body.fields ? { fields: body.fields as Record<string, string[]> } : {}),
    ...(body.compression ? { compression: body.compression } : {}),
  };
}

/** An object's query error, its fields named under the export's body: `filter.stage` becomes `filter.contacts.stage`. */
function underObject(err: unknown, object: ExportObject): unknown {
  if (!(err instanceof DomainError) || err.code !== ErrorCode.ValidationFailed) return err;
  const details = (err.details ?? []).map((d) => ({ ...d, field: d.field?.replace(/^(filter|fields)\b/, `$1.${object}`) ?? d.field }));
  return new DomainError(err.code, `${object}: ${err.message}`, details);
}
