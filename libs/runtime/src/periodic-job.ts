import { Logger } from '@crm/common';
import { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PeriodicTask, PeriodicTaskOptions } from './periodic-task';

export interface PeriodicJobOptions extends PeriodicTaskOptions {
  intervalMs: number;
  /** The warning a failed run logs; the next interval tries again. */
  failure: string;
  /** False leaves the job off, e.g. a retention period of 0 that keeps everything. */
  enabled?: boolean;
}

/**
 * A provider that runs `run` on a PeriodicTask from application bootstrap until shutdown, which waits for
 * the run in progress. The retention sweeps share it so each holds only what it deletes.
 */
export abstract class PeriodicJob implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly task: PeriodicTask;

  protected constructor(
    protected readonly logger: Logger,
    private readonly job: PeriodicJobOptions,
  ) {
    this.task = new PeriodicTask(
      job.intervalMs,
      () => this.run(),
      (err) => logger.warn({ err: err.message }, job.failure),
      job,
    );
  }

  protected abstract run(): Promise<void>;

  onApplicationBootstrap(): void {
    if (this.job.enabled !== false) this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}

export interface BatchedDelete {
  /** The name of the transaction-scoped advisory lock that lets one replica delete at a time. */
  lock: string;
  /** A DELETE whose last parameter is the most rows it removes. */
  sql: string;
  /** The parameters before that last one. */
  params: unknown[];
  batchSize: number;
  /** Checked between batches: a stopping process leaves the rest for the next run. */
  stopping: () => boolean;
  /** Called after each batch that removed something. */
  onBatch: (removed: number) => void;
}

/**
 * Runs `sql` until a batch comes back short, each batch in its own short transaction so a large backlog
 * never holds long locks. Answers how many rows it removed in all.
 */
export async function deleteInBatches(dataSource: DataSource, d: BatchedDelete): Promise<number> {
  let total = 0;
  while (!d.stopping()) {
    const removed = await dataSource.transaction(async (m) => {
      const [{ locked }] = (await m.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [d.lock])) as { locked: boolean }[];
      if (!locked) return 0;
      const [, count] = (await m.query(d.sql, [...d.params, d.batchSize])) as [unknown[], number];
      return count;
    });
    if (!removed) break;
    total += removed;
    d.onBatch(removed);
    if (removed < d.batchSize) break;
  }
  return total;
}
