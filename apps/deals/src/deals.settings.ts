import { Env, intVar, optionalVar } from '@crm/common';
import { ChangeSettings, loadChangeSettings, loadQuerySettings, loadSearchSettings, QuerySettings, SearchSettings } from '@crm/records';

export const DEALS_SETTINGS = Symbol('DEALS_SETTINGS');

export interface DealsSettings extends QuerySettings, ChangeSettings, SearchSettings {
  /** Inactivity after which trigger.deal.stale is emitted. */
  staleAfterMs: number;
  /** How often one replica sweeps for newly stale deals. */
  staleCheckIntervalMs: number;
}

const DAY_MS = 86_400_000;

/**
 * DEALS_STALE_AFTER_DAYS (default 14) is the product setting; DEALS_STALE_AFTER_SECONDS, when set,
 * replaces it with a finer value for demos and tests.
 */
export function loadDealsSettings(env: Env): DealsSettings {
  const days = intVar(env, 'DEALS_STALE_AFTER_DAYS', 14, { min: 1, max: 3650 });
  const seconds = optionalVar(env, 'DEALS_STALE_AFTER_SECONDS') === undefined ? undefined : intVar(env, 'DEALS_STALE_AFTER_SECONDS', 0, { min: 1 });
  return {
    staleAfterMs: seconds !== undefined ? seconds * 1000 : days * DAY_MS,
    staleCheckIntervalMs: intVar(env, 'DEALS_STALE_CHECK_INTERVAL_MS', 60_000, { min: 100, max: 86_400_000 }),
    ...loadQuerySettings(env),
    ...loadChangeSettings(env),
    ...loadSearchSettings(env),
  };
}
