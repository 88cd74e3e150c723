import { ConfigError } from '@crm/common';
import { randomBytes } from 'crypto';
import { DEFAULT_RETRY_SCHEDULE_MS, loadWebhooksSettings } from './webhooks.settings';

/** The one required setting: the key that encrypts signing secrets at rest. */
const KEYS = { WEBHOOKS_SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}` };

describe('webhooks settings', () => {
  it('has production defaults: HTTPS only, public addresses only', () => {
    const s = loadWebhooksSettings(KEYS);
    expect(s).toMatchObject({
      retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
      timeoutMs: 10_000,
      disableAfterFailedEvents: 5,
      allowInsecure: false,
      allowPrivate: false,
    });
    expect(s).toMatchObject({ secretOverlapSeconds: 86_400, deliveryRetentionDays: 30, retentionIntervalMs: 3_600_000, retentionBatchSize: 1000 });
    expect(s).toMatchObject({ maxSubscriptions: 100, filtersMaxCost: 1000, maxConcurrency: 32, maxPerOrigin: 64 });
  });

  it('requires the key that encrypts signing secrets', () => {
    expect(() => loadWebhooksSettings({})).toThrow('WEBHOOKS_SECRET_KEYS is not set');
  });

  it('reads a retry schedule', () => {
    expect(loadWebhooksSettings({ ...KEYS, WEBHOOKS_RETRY_SCHEDULE_MS: '100, 200,400' }).retryScheduleMs).toEqual([100, 200, 400]);
  });

  it.each([
    ['WEBHOOKS_RETRY_SCHEDULE_MS', '100,soon'],
    ['WEBHOOKS_RETRY_SCHEDULE_MS', '0'],
    ['WEBHOOKS_TIMEOUT_MS', '10'],
    ['WEBHOOKS_DISABLE_AFTER_FAILED_EVENTS', '0'],
    ['WEBHOOKS_MAX_CONCURRENCY', 'many'],
    ['WEBHOOKS_MAX_CONCURRENCY_PER_ORIGIN', '0'],
    ['WEBHOOKS_ALLOW_PRIVATE', 'maybe'],
    ['WEBHOOKS_RETRY_JITTER_PERCENT', '150'],
    ['WEBHOOKS_SECRET_OVERLAP_SECONDS', '-1'],
    ['WEBHOOKS_DELIVERY_RETENTION_DAYS', 'month'],
    ['WEBHOOKS_RETENTION_BATCH_SIZE', '0'],
    ['WEBHOOKS_FILTERS_MAX_COST', '0'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadWebhooksSettings({ ...KEYS, [name]: value })).toThrow(ConfigError);
  });
});
