import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { dealsEntities, dealsMigrations } from './database';

export const dealsService: ServiceDefinition = {
  service: ServiceName.Deals,
  defaultHealthPort: 3002,
  database: { entities: dealsEntities, migrations: dealsMigrations },
  imports: [],
};

export function startDeals(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(dealsService, env);
}
