import { CursorCodec, DomainError, ErrorCode, IdPrefix, isId, keysetPage, newId, Page, SortablePageQuery } from '@crm/common';
import { AppendImportRowsRequest, CreateImportRequest, EventType, IMPORT_FORMATS, ImportLimits, ImportView, RequestContext } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '@crm/records';
import { Import, ImportRow } from './import.entity';
import { importCounts, presentImport } from './import.presenter';
import { ImportRunner } from './import-runner';

const LIST = 'imports';

/** Import jobs: staged by the gateway while it reads the upload, then applied by ImportRunner. */
@Injectable()
export class ImportsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly runner: ImportRunner,
  ) {}

  async create(ctx: RequestContext, request: CreateImportRequest): Promise<ImportView> {
    if (!(IMPORT_FORMATS as readonly string[]).includes(request.format))
      throw DomainError.invalid('format', `format must be one of ${IMPORT_FORMATS.join(', ')}`);
    const { idempotency_ref: _ref, ...caller } = ctx;
    const id = newId(IdPrefix.Import);
    await this.dataSource
      .getRepository(Import)
      .insert({ id, object: request.object, format: request.format, status: 'receiving', requestContext: caller } as QueryDeepPartialEntity<Import>);
    return this.get(ctx, id);
  }

  /** Stages a chunk of rows, numbered on from the rows already staged. */
  async appendRows(id: string, { rows }: AppendImportRowsRequest): Promise<void> {
    if (!Array.isArray(rows) || rows.length > ImportLimits.chunkRows)
      throw DomainError.invalid('rows', `rows must be an array of at most ${ImportLimits.chunkRows}`);
    await this.dataSource.transaction(async (m) => {
      const job = await this.receiving(m, id);
      await m.query(
        `INSERT INTO import_rows (import_id, seq, line, "values", error)
         SELECT $1, $2 + ordinality - 1, line, "values", error
           FROM unnest($3::int[], $4::jsonb[], $5::jsonb[]) WITH ORDINALITY AS r(line, "values", error)`,
        [
          id,
          job.total,
          rows.map((r) => r.line),
          rows.map((r) => (r.values ? JSON.stringify(r.values) : null)),
          rows.map((r) => (r.error ? JSON.stringify(r.error) : null)),
        ],
      );
      await m.update(Import, { id }, { total: job.total + rows.length, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Import>);
    });
  }

  /** The upload is complete: queue the job and wake the runner. An empty upload completes at once. */
  async start(ctx: RequestContext, id: string): Promise<ImportView> {
    await this.dataSource.transaction(async (m) => {
      const job = await this.receiving(m, id);
      if (job.total > 0) {
        await m.update(Import, { id }, { status: 'queued', updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Import>);
        return;
      }
      await m.update(Import, { id }, { status: 'completed', completedAt: () => NOW_MS, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Import>);
      await this.announce(m, { ...job, status: 'completed' });
    });
    this.runner.kick();
    return this.get(ctx, id);
  }

  /** The upload broke (unreadable, too large, cut off): the job fails as a whole and nothing is applied. */
  async fail(ctx: RequestContext, id: string, reason: string): Promise<ImportView> {
    await this.dataSource.transaction(async (m) => {
      const job = await this.receiving(m, id);
      await m.update(Import, { id }, {
        status: 'failed',
        failureReason: reason.slice(0, 1000),
        completedAt: () => NOW_MS,
        updatedAt: () => NOW_MS,
      } as QueryDeepPartialEntity<Import>);
      await m.delete(ImportRow, { importId: id });
      await this.announce(m, { ...job, status: 'failed' });
    });
    return this.get(ctx, id);
  }

  /** The import as the caller may see it: its outcome only with read on its object. */
  async get(ctx: RequestContext, id: string): Promise<ImportView> {
    const job = isId(id, IdPrefix.Import) ? await this.dataSource.getRepository(Import).findOneBy({ id }) : null;
    if (!job) throw DomainError.notFound('import', id);
    return presentImport(job, ctx.readable);
  }

  /** Newest first would suit a dashboard, but every list here is oldest first with keyset cursors. */
  async list(ctx: RequestContext, query: SortablePageQuery): Promise<Page<ImportView>> {
    return keysetPage(this.cursors, this.dataSource.getRepository(Import), 'i', LIST, query).read((job) => presentImport(job, ctx.readable));
  }

  private async receiving(m: EntityManager, id: string): Promise<Import> {
    const job = isId(id, IdPrefix.Import) ? await m.findOne(Import, { where: { id }, lock: { mode: 'pessimistic_write' } }) : null;
    if (!job) throw DomainError.notFound('import', id);
    if (job.status !== 'receiving') throw new DomainError(ErrorCode.Conflict, `Import '${id}' is ${job.status}; rows can only be added while it is receiving.`);
    return job;
  }

  private announce(m: EntityManager, job: Import): Promise<unknown> {
    return this.outbox.append(m, EventType.ImportCompleted, {
      import_id: job.id,
      object: job.object,
      status: job.status as 'completed' | 'failed',
      counts: importCounts(job),
    });
  }
}
