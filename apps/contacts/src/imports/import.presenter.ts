import { mayRead, objectResource, type ImportEventCounts, type ImportView } from '@crm/contracts';
import { Import } from './import.entity';

export function importCounts(job: Import): ImportEventCounts {
  return { total: job.total, processed: job.nextSeq, created: job.created, updated: job.updated, failed: job.failed };
}

/**
 * An import as `readable` (the caller's readable resources; undefined: everything) may see it. Without read
 * on the object, which rows created, updated or were refused would tell the caller which records existed,
 * so only the progress is shown (docs/imports.md, "Who sees what").
 */
export function presentImport(job: Import, readable: readonly string[] | undefined): ImportView {
  const { total, processed, ...outcome } = importCounts(job);
  const shown = mayRead(readable, objectResource(job.object));
  return {
    id: job.id,
    object: job.object,
    format: job.format,
    status: job.status,
    counts: shown ? { total, processed, ...outcome, skipped: job.skipped ?? 0 } : { total, processed },
    ...(shown ? { errors: job.errors ?? [], warnings: job.warnings ?? [] } : {}),
    failure_reason: job.failureReason,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    completed_at: job.completedAt?.toISOString() ?? null,
  };
}
