import { Env, intVar, Logger, RetentionSettings, TableRetention } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { deleteInBatches, LOGGER, PeriodicJob } from '@crm/runtime';

export const CHANGE_SETTINGS = Symbol('CHANGE_SETTINGS');

/** The settings' type is the loader's, so each setting is declared (and documented) once, where it is read. */
export type ChangeSettings = ReturnType<typeof loadChangeSettings>;

export function loadChangeSettings(env: Env) {
  return {
    /** Entries older than this many days are deleted; 0 keeps them all. */
    changesRetentionDays: intVar(env, 'CHANGES_RETENTION_DAYS', 0, { min: 0, max: 36_500 }),
    /** Most entries one DELETE removes, each in its own short transaction. */
    changesRetentionBatchSize: intVar(env, 'CHANGES_RETENTION_BATCH_SIZE', 1000, { min: 1, max: 100_000 }),
    changesRetentionIntervalMs: intVar(env, 'CHANGES_RETENTION_INTERVAL_MS', 3_600_000, { min: 100, max: 86_400_000 }),
    /** A finished import (its counts and first errors) is kept this many days after it completed; 0 keeps it. */
    importsRetentionDays: intVar(env, 'IMPORTS_RETENTION_DAYS', 30, { min: 0, max: 36_500 }),
  };
}

/** The RetentionJob of a service that keeps records: at the change history's pace (CHANGES_RETENTION_INTERVAL_MS, _BATCH_SIZE). */
export function recordsRetention(env: Env): RetentionSettings {
  const settings = loadChangeSettings(env);
  return {
    intervalMs: settings.changesRetentionIntervalMs,
    batchSize: settings.changesRetentionBatchSize,
    days: { IMPORTS_RETENTION_DAYS: settings.importsRetentionDays },
  };
}

/** The record engine's own tables, in every service that keeps records. */
export const RECORD_ENGINE_TABLES: TableRetention[] = [
  { table: 'association_types', kept: 'one row per association type' },
  { table: 'built_in_custom_fields', kept: 'one row per custom field definition' },
  { table: 'search_words', kept: 'one row per distinct word of the records: grows with the vocabulary, not with writes' },
];

/**
 * Deletes change entries older than CHANGES_RETENTION_DAYS, oldest first, at most
 * CHANGES_RETENTION_BATCH_SIZE per transaction so a large backlog never holds long locks; a
 * transaction-scoped advisory lock lets one replica delete at a time.
 */
@Injectable()
export class ChangeRetentionJob extends PeriodicJob {
  /** Totals since start: how tests, and anyone debugging, see that sweeps ran. */
  readonly totals = { sweeps: 0, removed: 0, batches: 0, largestBatch: 0 };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CHANGE_SETTINGS) private readonly settings: ChangeSettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    super(logger, {
      intervalMs: settings.changesRetentionIntervalMs,
      failure: 'change history retention sweep failed; retrying next interval',
      enabled: settings.changesRetentionDays > 0,
    });
  }

  protected async run(): Promise<void> {
    const removed = await this.sweep();
    this.totals.sweeps += 1;
    if (removed) this.logger.info({ removed }, 'deleted change history past the retention period');
  }

  /** One sweep: batches until nothing old is left. Answers how many entries it deleted. */
  async sweep(): Promise<number> {
    const { changesRetentionDays: days, changesRetentionBatchSize: batchSize } = this.settings;
    if (days <= 0) return 0;
    return deleteInBatches(this.dataSource, {
      lock: 'crm:changes:retention',
      // Ids are ULIDs, so the oldest entries come first on the primary key and the scan stops early.
      sql: `DELETE FROM changes WHERE id IN (
              SELECT id FROM changes WHERE occurred_at < now() - make_interval(days => $1) ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      params: [days],
      batchSize,
      stopping: () => this.task.stopping,
      onBatch: (removed) => {
        this.totals.removed += removed;
        this.totals.batches += 1;
        this.totals.largestBatch = Math.max(this.totals.largestBatch, removed);
      },
    });
  }
}
