import { Env, intVar } from '@crm/common';

export const EVENTS_SETTINGS = Symbol('EVENTS_SETTINGS');

export interface EventsSettings {
  /** Events older than this many days are pruned from the log; 0 keeps them for ever. */
  retentionDays: number;
  /** How often the retention sweep runs. */
  pruneIntervalMs: number;
}

export function loadEventsSettings(env: Env): EventsSettings {
  return {
    retentionDays: intVar(env, 'EVENTS_RETENTION_DAYS', 0, { min: 0, max: 36_500 }),
    pruneIntervalMs: intVar(env, 'EVENTS_PRUNE_INTERVAL_MS', 3_600_000, { min: 1000 }),
  };
}
