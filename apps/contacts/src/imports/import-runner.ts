import { DomainError, Logger, validateInput } from '@crm/common';
import {
  CreateCompanyDto,
  CreateContactDto,
  CustomFieldDefinition,
  EventType,
  RequestContext,
  ImportDealsBatchReply,
  ImportDealsBatchRequest,
  ImportLimits,
  ImportObject,
  ImportRowError,
  keptBy,
  Ops,
  SlugKeptBy,
  UpdateCompanyDto,
  UpdateContactDto,
  importRowBody,
} from '@crm/contracts';
import { originOf, OutboxService, RpcCaller, withOrigin } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { BuiltInCustomFieldsService, importRowErrors, NOW_MS } from '@crm/records';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { CompaniesService } from '../companies/companies.service';
import { ContactsService } from '../contacts/contacts.service';
import { Import, ImportRow } from './import.entity';
import { importCounts } from './import.presenter';

/**
 * How often queued jobs are looked for without a wake-up. The replica a job is started on is woken at
 * once (ImportsService.start) and applies it to the end, and a restarted replica looks at start-up; what
 * is left to this look is a job a stopped replica left running while the others kept going, and the
 * uploads abandoned for ABANDONED_AFTER_MS, neither of which needs it more often than once a minute.
 */
const POLL_MS = 60_000;
/** The first wait after a failed batch; each failure in a row doubles it, up to POLL_MS. */
const FIRST_RETRY_MS = 500;
/** An upload that has staged nothing for this long is taken as abandoned. */
const ABANDONED_AFTER_MS = 15 * 60 * 1000;

type Outcome = 'created' | 'updated';

/** The importable objects this service keeps: each has its row writer below, or this service does not compile. */
type LocalImport = ImportObject & SlugKeptBy<'contacts'>;
type RowWriter = (m: EntityManager, ctx: RequestContext, body: Record<string, unknown>) => Promise<Outcome>;

/** The context an import's rows are written under: the POST /imports request's key and request id, through the `import` channel. */
function importContext(job: Import): RequestContext {
  return { ...job.requestContext, via: 'import' };
}

/**
 * Applies queued imports in batches. Each batch is one transaction: the job row locked (SKIP LOCKED, so
 * replicas share jobs and never the same batch), every row applied through the owning service's own write
 * in a savepoint (same validation, same events; a bad row rolls back alone and is recorded), then the
 * counts and the resume point saved and the applied rows deleted. A process that dies mid-batch leaves
 * the batch uncommitted, and whichever replica comes next applies it from the start: no row twice.
 */
@Injectable()
export class ImportRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;
  private retryMs = FIRST_RETRY_MS;
  private running?: Promise<void>;
  private wanted = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly contacts: ContactsService,
    private readonly companies: CompaniesService,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly rpc: RpcCaller,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * How a row of each importable object kept here is written: contacts are matched by email and companies by
   * domain; a match is updated (PATCH rules), else created. Objects the deals service keeps go to applyRemote.
   */
  private readonly writers: Record<LocalImport, RowWriter> = {
    contacts: async (m, ctx, body) => {
      const email = typeof body.email === 'string' ? body.email.trim() : undefined;
      const [match] = email ? ((await m.query(`SELECT id FROM contacts WHERE lower(email) = lower($1)`, [email])) as Array<{ id: string }>) : [];
      if (match) {
        await this.contacts.update(ctx, match.id, validateInput(UpdateContactDto, body, 'row'), m);
        return 'updated';
      }
      await this.contacts.create(ctx, validateInput(CreateContactDto, body, 'row'), m);
      return 'created';
    },
    companies: async (m, ctx, body) => {
      const domain = typeof body.domain === 'string' ? body.domain.trim() : undefined;
      const [match] = domain
        ? ((await m.query(`SELECT id FROM companies WHERE lower(domain) = lower($1) ORDER BY id LIMIT 1`, [domain])) as Array<{ id: string }>)
        : [];
      if (match) {
        await this.companies.update(ctx, match.id, validateInput(UpdateCompanyDto, body, 'row'), m);
        return 'updated';
      }
      await this.companies.create(ctx, validateInput(CreateCompanyDto, body, 'row'), m);
      return 'created';
    },
  };

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
    await this.running;
  }

  /** Runs batches until none is left; a kick while running makes it look again when done. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wanted = true;
      return;
    }
    this.running = this.drain()
      .then(() => {
        this.retryMs = FIRST_RETRY_MS;
      })
      .catch((err: Error) => {
        // Retried soon, not at the next minute's look: a batch that failed as a replica started (its
        // connections still warming) would otherwise hold a resumed import up for a minute.
        this.logger.warn({ err: err.message, retry_ms: this.retryMs }, 'import batch failed; it will be retried');
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.kick(), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, POLL_MS);
      })
      .finally(() => {
        this.running = undefined;
        if (this.wanted) {
          this.wanted = false;
          this.kick();
        }
      });
  }

  private async drain(): Promise<void> {
    await this.failAbandonedUploads();
    while (!this.stopped && (await this.step())) {
      // next batch
    }
  }

  /**
   * An upload whose gateway died mid-way never starts: once no rows have arrived for ABANDONED_AFTER, the
   * job fails as a whole (nothing was applied) and says why.
   */
  private async failAbandonedUploads(): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const abandoned: Import[] = await m
        .getRepository(Import)
        .createQueryBuilder('i')
        .where(`i.status = 'receiving' AND i.updated_at < now() - make_interval(secs => :seconds)`, { seconds: ABANDONED_AFTER_MS / 1000 })
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getMany();
      for (const job of abandoned) {
        await m.update(Import, { id: job.id }, {
          status: 'failed',
          failureReason: 'The upload did not finish.',
          completedAt: () => NOW_MS,
          updatedAt: () => NOW_MS,
        } as QueryDeepPartialEntity<Import>);
        await m.delete(ImportRow, { importId: job.id });
        await this.outbox.append(m, EventType.ImportCompleted, { import_id: job.id, object: job.object, status: 'failed', counts: importCounts(job) });
      }
    });
  }

  /** Applies one batch of one job; false when no job has rows to apply. */
  async step(): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      const job = await m
        .getRepository(Import)
        .createQueryBuilder('i')
        .where(`i.status IN ('queued', 'running')`)
        .orderBy('i.id', 'ASC')
        .limit(1)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .getOne();
      if (!job) return false;
      // Every row's events and change entries name who uploaded the file and the upload's request.
      return withOrigin(originOf(importContext(job), 'import'), () => this.applyBatch(m, job));
    });
  }

  /** Applies the next rows of `job` and saves its progress, inside the batch's transaction. */
  private async applyBatch(m: EntityManager, job: Import): Promise<true> {
    const take = keptBy(job.object, 'deals') ? ImportLimits.dealBatchRows : ImportLimits.batchRows;
    const rows = await m.find(ImportRow, { where: { importId: job.id }, order: { seq: 'ASC' }, take });
    const counts = { created: 0, updated: 0, failed: 0, skipped: 0 };
    const errors: ImportRowError[] = [];
    const warnings: ImportRowError[] = [];
    const unreadable = rows.filter((row) => row.error);
    for (const row of unreadable) errors.push({ line: row.line, field: null, ...row.error! });
    counts.failed += unreadable.length;
    const readable = rows.filter((row) => !row.error);
    if (keptBy(job.object, 'deals')) {
      if (readable.length) {
        const applied = await this.applyDeals(job, rows[0].seq, readable);
        counts.created += applied.created;
        counts.failed += applied.failed;
        errors.push(...applied.errors);
      }
    } else {
      const custom = (await this.customFields.state(m, job.object)).fields;
      for (const row of readable) {
        const failed = await this.applyRow(m, job, row, custom, counts);
        if (failed && 'skipped' in failed) {
          counts.skipped++;
          warnings.push(failed.skipped);
        } else if (failed) {
          counts.failed++;
          errors.push(...failed);
        }
      }
    }
    errors.sort((a, b) => a.line - b.line);
    if (rows.length) await m.query(`DELETE FROM import_rows WHERE import_id = $1 AND seq <= $2`, [job.id, rows[rows.length - 1].seq]);
    const next: Import = {
      ...job,
      nextSeq: job.nextSeq + rows.length,
      created: job.created + counts.created,
      updated: job.updated + counts.updated,
      failed: job.failed + counts.failed,
      errors: [...job.errors, ...errors].slice(0, ImportLimits.errors),
      skipped: job.skipped + counts.skipped,
      warnings: [...job.warnings, ...warnings].slice(0, ImportLimits.errors),
    };
    const done = next.nextSeq >= job.total;
    next.status = done ? 'completed' : 'running';
    await m.update(Import, { id: job.id }, {
      status: next.status,
      nextSeq: next.nextSeq,
      created: next.created,
      updated: next.updated,
      failed: next.failed,
      errors: next.errors,
      skipped: next.skipped,
      warnings: next.warnings,
      updatedAt: () => NOW_MS,
      ...(done ? { completedAt: () => NOW_MS } : {}),
    } as QueryDeepPartialEntity<Import>);
    if (done) {
      await this.outbox.append(m, EventType.ImportCompleted, { import_id: job.id, object: job.object, status: 'completed', counts: importCounts(next) });
    }
    return true;
  }

  /**
   * Deals belong to the deals service, which applies a batch in its own transaction and records it there
   * under (import, first row): asked again after this transaction failed to commit, it answers what it
   * did the first time instead of applying the rows twice.
   */
  private applyDeals(job: Import, firstSeq: number, rows: ImportRow[]): Promise<ImportDealsBatchReply> {
    const batch: ImportDealsBatchRequest = {
      import_id: job.id,
      object: job.object as ImportObject & SlugKeptBy<'deals'>,
      first_seq: firstSeq,
      format: job.format,
      rows: rows.map((row) => ({ line: row.line, values: row.values ?? {} })),
    };
    return this.rpc.call(Ops.dealsInternal.importBatch, importContext(job), { body: batch });
  }

  /**
   * Applies one row in a savepoint; answers its errors when the data was refused, its warning when it was
   * skipped (an erased person's suppressed email, docs/privacy.md), undefined when applied.
   */
  private async applyRow(
    m: EntityManager,
    job: Import,
    row: ImportRow,
    custom: readonly CustomFieldDefinition[],
    counts: Record<Outcome, number>,
  ): Promise<ImportRowError[] | { skipped: ImportRowError } | undefined> {
    try {
      counts[await this.upsert(m, job, importRowBody(job.object, job.format, row.values ?? {}, custom))]++;
      return undefined;
    } catch (err) {
      const suppressed = err instanceof DomainError ? err.details?.find((d) => d.code === 'suppressed') : undefined;
      if (suppressed)
        return { skipped: { line: row.line, field: suppressed.field, code: suppressed.code, message: 'Skipped: the email was erased and is suppressed.' } };
      const refused = importRowErrors(row.line, err);
      if (!refused) throw err;
      return refused;
    }
  }

  /** A row of an object this service keeps, through its writer; one it does not keep is a fault of the caller, not a company. */
  private async upsert(m: EntityManager, job: Import, body: Record<string, unknown>): Promise<Outcome> {
    if (!keptBy(job.object, 'contacts') || !Object.hasOwn(this.writers, job.object)) throw new Error(`the contacts service imports no '${job.object}'`);
    return this.writers[job.object as LocalImport](m, importContext(job), body);
  }
}
