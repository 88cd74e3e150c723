import { boolVar, ConfigError, Env, intVar, stringVar } from '@crm/common';
import { loadSecretKeyring, SecretKeyring } from '../secrets/secret-keyring';

export const WEBHOOKS_SETTINGS = Symbol('WEBHOOKS_SETTINGS');

export interface WebhooksSettings {
  /** Delay before each retry of a failed event, in milliseconds; its length is the number of retries. */
  retryScheduleMs: number[];
  /** Each delay is spread uniformly over ±this fraction so a recovering endpoint is not hit in lock-step. */
  retryJitter: number;
  /** One attempt (connect, send, answer) may take this long before it counts as failed. */
  timeoutMs: number;
  /** A subscription is disabled after this many consecutive events were given up on. */
  disableAfterFailedEvents: number;
  /** The longest a replica sleeps without a wake-up before it looks for due work anyway (a lost notification). */
  dispatchIntervalMs: number;
  /** Subscriptions one replica delivers to at the same time (each subscription gets at most one). */
  maxConcurrency: number;
  /** Requests one replica has in flight to one endpoint origin (scheme, host and port) at most, whatever the subscriptions posting there. */
  maxPerOrigin: number;
  /** Events one subscription is sent in a row before its slot goes back to the pool. */
  eventsPerTurn: number;
  /** Most subscriptions a deployment may have. */
  maxSubscriptions: number;
  /**
   * Most conditions the deployment's distinct stored filters may have in all: every new event is tested with
   * each of them, so this bounds what screening one event costs, whatever the number of subscriptions.
   */
  filtersMaxCost: number;
  allowInsecure: boolean;
  allowPrivate: boolean;
  /** After a PATCH replaces the signing secret, deliveries carry a signature with the old one too for this long. */
  secretOverlapSeconds: number;
  /** Delivery attempts older than this many days are deleted; 0 keeps them for ever. */
  deliveryRetentionDays: number;
  /** The copies of events older than this many days are deleted (WEBHOOKS_EVENT_RETENTION_DAYS); 0 keeps them. */
  eventRetentionDays: number;
  /** How often the retention sweep runs. */
  retentionIntervalMs: number;
  /** Most delivery attempts one DELETE of the sweep removes. */
  retentionBatchSize: number;
  /** The operator's keys that encrypt signing secrets at rest (WEBHOOKS_SECRET_KEYS). */
  secretKeys: SecretKeyring;
}

/** Roughly exponential, capped at 12 h: an event is given up on about 33 hours after its first attempt. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 43_200_000];

function scheduleVar(env: Env, name: string, fallback: number[]): number[] {
  const raw = stringVar(env, name, '');
  if (raw === '') return fallback;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length > 20) throw new ConfigError(`${name} may list at most 20 delays, got ${parts.length}`);
  return parts.map((part) => {
    if (!/^\d+$/.test(part)) throw new ConfigError(`${name} must be comma-separated milliseconds, e.g. 5000,60000; got '${raw}'`);
    const value = Number(part);
    if (value < 1 || value > 7 * 24 * 3_600_000) throw new ConfigError(`${name} delays must be between 1 ms and 7 days, got ${value}`);
    return value;
  });
}

export function loadWebhooksSettings(env: Env): WebhooksSettings {
  const jitterPercent = intVar(env, 'WEBHOOKS_RETRY_JITTER_PERCENT', 20, { min: 0, max: 100 });
  return {
    retryScheduleMs: scheduleVar(env, 'WEBHOOKS_RETRY_SCHEDULE_MS', DEFAULT_RETRY_SCHEDULE_MS),
    retryJitter: jitterPercent / 100,
    timeoutMs: intVar(env, 'WEBHOOKS_TIMEOUT_MS', 10_000, { min: 100, max: 60_000 }),
    disableAfterFailedEvents: intVar(env, 'WEBHOOKS_DISABLE_AFTER_FAILED_EVENTS', 5, { min: 1, max: 1000 }),
    dispatchIntervalMs: intVar(env, 'WEBHOOKS_DISPATCH_INTERVAL_MS', 30_000, { min: 10, max: 60_000 }),
    maxConcurrency: intVar(env, 'WEBHOOKS_MAX_CONCURRENCY', 32, { min: 1, max: 1000 }),
    maxPerOrigin: intVar(env, 'WEBHOOKS_MAX_CONCURRENCY_PER_ORIGIN', 64, { min: 1, max: 1000 }),
    eventsPerTurn: intVar(env, 'WEBHOOKS_EVENTS_PER_TURN', 100, { min: 1, max: 10_000 }),
    maxSubscriptions: intVar(env, 'WEBHOOKS_MAX_SUBSCRIPTIONS', 100, { min: 1, max: 100_000 }),
    filtersMaxCost: intVar(env, 'WEBHOOKS_FILTERS_MAX_COST', 1_000, { min: 1, max: 1_000_000 }),
    allowInsecure: boolVar(env, 'WEBHOOKS_ALLOW_INSECURE', false),
    allowPrivate: boolVar(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
    secretOverlapSeconds: intVar(env, 'WEBHOOKS_SECRET_OVERLAP_SECONDS', 86_400, { min: 0, max: 30 * 86_400 }),
    deliveryRetentionDays: intVar(env, 'WEBHOOKS_DELIVERY_RETENTION_DAYS', 30, { min: 0, max: 36_500 }),
    eventRetentionDays: intVar(env, 'WEBHOOKS_EVENT_RETENTION_DAYS', 30, { min: 0, max: 36_500 }),
    retentionIntervalMs: intVar(env, 'WEBHOOKS_RETENTION_INTERVAL_MS', 3_600_000, { min: 100, max: 86_400_000 }),
    retentionBatchSize: intVar(env, 'WEBHOOKS_RETENTION_BATCH_SIZE', 1000, { min: 1, max: 100_000 }),
    secretKeys: loadSecretKeyring(env),
  };
}
