import { DomainError, ErrorCode, Logger, newId, IdPrefix } from '@crm/common';
import { exportFileName, ExportFileView, ExportLimits, ExportObject, ExportProgressView, RequestContext } from '@crm/contracts';
import { LOGGER, PeriodicJob } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EVENTS_SETTINGS, EventsSettings } from '../log/events.settings';
import { ExportRecord } from './export.entity';
import { PieceWriter } from './export-files';
import { rowEncoder } from './export-encoding';
import { ExportPages } from './export-pages';
import { hydrateExport } from './exports.service';

/** The run of an export was taken over by another replica (it stopped reporting in time) or the export is gone. */
class Superseded extends Error {}

/**
 * Runs queued exports (docs/exports.md), one at a time per replica: claims the oldest (SKIP LOCKED, so
 * replicas share the queue), or one whose replica stopped reporting for EXPORTS_STALE_SECONDS (it was
 * killed), which starts again from nothing. Each run reads the log's head first (`as_of`), then asks the
 * owning services for their rows page by page in id order, writing each page to the file's pieces and
 * reporting progress, which is also its heartbeat. Deletes exports past their retention on the way.
 */
@Injectable()
export class ExportRunner extends PeriodicJob {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pages: ExportPages,
    @Inject(EVENTS_SETTINGS) private readonly settings: EventsSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, { intervalMs: settings.exportsPollMs, failure: 'export run failed' });
  }

  protected async run(): Promise<void> {
    await this.dataSource.query(`DELETE FROM exports WHERE id IN (SELECT id FROM exports WHERE expires_at < now() LIMIT 100)`);
    for (let claimed = await this.claim(); claimed && !this.task.stopping; claimed = await this.claim()) await this.perform(claimed);
  }

  private async claim(): Promise<ExportRecord | undefined> {
    const [rows]: [Record<string, unknown>[], number] = await this.dataSource.query(
      `UPDATE exports SET status = 'running', attempt = attempt + 1, heartbeat_at = now(), as_of = NULL, progress = '{}', files = '[]'
        WHERE id = (SELECT id FROM exports
                     WHERE status = 'queued' OR (status = 'running' AND heartbeat_at < now() - make_interval(secs => $1))
                     ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [this.settings.exportsStaleSeconds],
    );
    return rows.length ? (hydrateExport(rows[0]) as ExportRecord) : undefined;
  }

  private async perform(record: ExportRecord): Promise<void> {
    try {
      await this.dataSource.query(`DELETE FROM export_pieces WHERE export_id = $1`, [record.id]);
      // The handoff: the log's head before any row is read. Every change committed after this read is
      // appended to the log after it too (positions become visible in order), so its event is after as_of.
      const [{ head }] = await this.dataSource.query(`SELECT coalesce(max(position), 0)::text AS head FROM events`);
      await this.report(record, `as_of = $3`, [head]);
      const ctx: RequestContext = {
        request_id: newId(IdPrefix.Export),
        key_id: record.keyId ?? undefined,
        ...(record.readable ? { readable: record.readable } : {}),
      };
      const progress: Partial<Record<ExportObject, ExportProgressView>> = {};
      const files: ExportFileView[] = [];
      for (const object of record.objects) {
        const compression = record.request.compression ?? null;
        const writer = new PieceWriter(this.dataSource, record.id, exportFileName(object, record.format, compression), compression);
        const encoder = rowEncoder(record.format);
        progress[object] = { rows: 0 };
        let cursor: string | undefined;
        do {
          const page = await this.pages.page(ctx, object, {
            filter: record.request.filter?.[object],
            fields: record.request.fields?.[object],
            cursor,
            limit: ExportLimits.pageRows,
          });
          await writer.write(encoder.encode(page.data), page.data.length);
          progress[object] = { rows: writer.rows };
          await this.report(record, `progress = $3`, [JSON.stringify(progress)]);
          cursor = page.has_more ? page.next_cursor : undefined;
        } while (cursor && !this.task.stopping);
        if (this.task.stopping) return; // another replica takes it over once the heartbeat is stale
        files.push({ name: writer.name, object, ...(await writer.close()) });
      }
      await this.report(record, `status = 'completed', files = $3, completed_at = now(), expires_at = now() + make_interval(hours => $4)`, [
        JSON.stringify(files),
        this.settings.exportsRetentionHours,
      ]);
    } catch (err) {
      if (err instanceof Superseded) return;
      const known = err instanceof DomainError;
      if (!known) this.logger.error({ err, export_id: record.id }, 'export failed');
      const error = known ? { code: err.code, message: err.message } : { code: ErrorCode.Internal, message: 'The export failed; start a new one.' };
      await this.report(record, `status = 'failed', error = $3, completed_at = now(), expires_at = now() + make_interval(hours => $4)`, [
        JSON.stringify(error),
        this.settings.exportsRetentionHours,
      ]).catch(() => undefined);
    }
  }

  /** Sets `assignments` (parameters from $3) and the heartbeat, if this run still holds the export; otherwise stops the run. */
  private async report(record: ExportRecord, assignments: string, params: unknown[]): Promise<void> {
    const [rows]: [unknown[], number] = await this.dataSource.query(
      `UPDATE exports SET ${assignments}, heartbeat_at = now() WHERE id = $1 AND attempt = $2 AND status = 'running' RETURNING id`,
      [record.id, record.attempt, ...params],
    );
    if (!rows.length) throw new Superseded();
  }
}
