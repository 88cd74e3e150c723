import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { loadWebhooksSettings, WEBHOOKS_SETTINGS } from './config/webhooks.settings';
import { webhooksEntities, webhooksMigrations } from './database';
import { WebhooksModule } from './webhooks.module';

export const webhooksApp: ServiceDefinition = {
  service: ServiceName.Webhooks,
  defaultHealthPort: 3004,
  database: { entities: webhooksEntities, migrations: webhooksMigrations },
  imports: [WebhooksModule],
  settings: { token: WEBHOOKS_SETTINGS, load: loadWebhooksSettings },
};

export function startWebhooks(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(webhooksApp, env);
}
