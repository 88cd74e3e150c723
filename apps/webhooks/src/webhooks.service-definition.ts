import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { webhooksEntities, webhooksMigrations } from './database';

export const webhooksService: ServiceDefinition = {
  service: ServiceName.Webhooks,
  defaultHealthPort: 3004,
  database: { entities: webhooksEntities, migrations: webhooksMigrations },
  imports: [],
};

export function startWebhooks(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(webhooksService, env);
}
