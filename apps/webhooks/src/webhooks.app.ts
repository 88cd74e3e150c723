import { ServiceName } from '@crm/contracts';
import { webhooksRetention, webhooksTables } from './database/tables';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { loadWebhooksSettings, WEBHOOKS_SETTINGS } from './config/webhooks.settings';
import { webhooksEntities, webhooksMigrations } from './database';
import { WebhooksModule } from './webhooks.module';
import { WebhooksErasureModule } from './privacy/webhooks-erasure';

/**
 * The webhooks service as started with `env`. Settings are read first: one migration encrypts stored
 * signing secrets, so it needs the keyring of WEBHOOKS_SECRET_KEYS before the database is touched.
 */
export function webhooksApp(env: Record<string, string | undefined>): ServiceDefinition {
  const settings = loadWebhooksSettings(env);
  return {
    service: ServiceName.Webhooks,
    defaultHealthPort: 3004,
    database: { entities: webhooksEntities, migrations: webhooksMigrations(settings.secretKeys) },
    retention: { tables: webhooksTables, settings: (e) => webhooksRetention(settings, e) },
    imports: [WebhooksModule, WebhooksErasureModule],
    settings: { token: WEBHOOKS_SETTINGS, load: () => settings },
  };
}

export function startWebhooks(env: Record<string, string | undefined> = process.env): Promise<RunningService> {
  return startService(webhooksApp(env), env);
}
