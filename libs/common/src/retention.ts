/**
 * What a table of a service's schema does over the years (docs/deployment.md, "Retention"). Every table is
 * declared by the store that writes it, one way or the other, and a deployment check compares the
 * declarations with the tables the migrations make, so a new table that grows cannot go unnoticed.
 */
export type TableRetention = RetainedTable | KeptTable;

/** A table whose rows age out: rows older than the setting's days are deleted in batches. */
export interface RetainedTable {
  table: string;
  /** The timestamp a row's age is read from. */
  column: string;
  /** A unique column (or the primary key's) the batched delete picks rows by. */
  key: string;
  /** The per-deployment setting, in days (hours where `unit` says so); 0 keeps every row. */
  setting: string;
  defaultDays: number;
  unit?: 'days' | 'hours';
  /** Rows this condition excludes are never deleted, however old (a delivery still pending). */
  keep?: string;
  /**
   * Who deletes: `retention-job` is the service's RetentionJob (libs/runtime); anything else names the
   * job that already did before this table was declared (the event log's, the change history's, …).
   */
  sweptBy: 'retention-job' | string;
}

/** A table that does not grow by itself, or holds what a client keeps until it deletes it. */
export interface KeptTable {
  table: string;
  kept: string;
}

export function isRetained(t: TableRetention): t is RetainedTable {
  return 'setting' in t;
}

/** How a service's RetentionJob runs: read by the service from its settings, each variable by its literal name. */
export interface RetentionSettings {
  intervalMs: number;
  /** Most rows one DELETE removes, each in its own short transaction. */
  batchSize: number;
  /** Days kept by each setting a `retention-job` table names; 0 keeps every row. */
  days: Record<string, number>;
}
