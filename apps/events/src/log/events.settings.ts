import { Env, intVar } from '@crm/common';
import { loadQuerySettings } from '@crm/records';
import { EVENT_FILTER_SCAN_LIMIT } from '@crm/contracts';

export const EVENTS_SETTINGS = Symbol('EVENTS_SETTINGS');

/** The settings' type is the loader's, so each setting is declared (and documented) once, where it is read. */
export type EventsSettings = ReturnType<typeof loadEventsSettings>;

export function loadEventsSettings(env: Env) {
  return {
    /** Events older than this many days are pruned from the log; 0 keeps them for ever. */
    retentionDays: intVar(env, 'EVENTS_RETENTION_DAYS', 0, { min: 0, max: 36_500 }),
    /** How often the retention sweep runs. */
    pruneIntervalMs: intVar(env, 'EVENTS_PRUNE_INTERVAL_MS', 3_600_000, { min: 1000 }),
    /** The most events one DELETE of the retention sweep removes, each batch in its own short transaction. */
    pruneBatchSize: intVar(env, 'EVENTS_PRUNE_BATCH_SIZE', 5000, { min: 1, max: 100_000 }),
    /** The most events one page of a filtered read tests (docs/events.md). */
    filterScanLimit: intVar(env, 'EVENTS_FILTER_SCAN_LIMIT', EVENT_FILTER_SCAN_LIMIT, { min: 10, max: 100_000 }),
    /**
     * The most condition tests one page of a filtered read makes (events examined times the filter's
     * conditions): a filter with many conditions examines fewer events a page, and says so with has_more
     * and a cursor, as at EVENTS_FILTER_SCAN_LIMIT (docs/events.md).
     */
    filterScanCost: intVar(env, 'EVENTS_FILTER_SCAN_COST', EVENT_FILTER_SCAN_LIMIT * 10, { min: 10, max: 10_000_000 }),
    /** Exports one key may have queued or running at once (docs/exports.md); one more is 409. */
    exportsMaxRunningPerKey: intVar(env, 'EXPORTS_MAX_RUNNING_PER_KEY', 2, { min: 1, max: 100 }),
    /** Hours an export and its files are kept after it finishes. */
    exportsRetentionHours: intVar(env, 'EXPORTS_RETENTION_HOURS', 24, { min: 1, max: 24 * 365 }),
    /** How often a replica looks for an export to run, and for expired ones to delete. */
    exportsPollMs: intVar(env, 'EXPORTS_POLL_MS', 1000, { min: 50, max: 600_000 }),
    /** A running export whose replica has not reported for this long is started again by another. */
    exportsStaleSeconds: intVar(env, 'EXPORTS_STALE_SECONDS', 60, { min: 5, max: 86_400 }),
    /** Longest one read of the log may take, all its statements together (QUERY_TIMEOUT_MS, docs/events.md). */
    queryTimeoutMs: loadQuerySettings(env).queryTimeoutMs,
  };
}
