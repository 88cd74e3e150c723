import type { ImportCounts, ImportView } from '@crm/contracts';
import { Import } from './import.entity';

export function importCounts(job: Import): ImportCounts {
  return { total: job.total, processed: job.nextSeq, created: job.created, updated: job.updated, failed: job.failed };
}

export function presentImport(job: Import): ImportView {
  return {
    id: job.id,
    object: job.object,
    format: job.format,
    status: job.status,
    counts: importCounts(job),
    errors: job.errors ?? [],
    failure_reason: job.failureReason,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    completed_at: job.completedAt?.toISOString() ?? null,
  };
}
