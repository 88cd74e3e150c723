import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { eventsEntities, eventsMigrations } from './database';

export const eventsService: ServiceDefinition = {
  service: ServiceName.Events,
  defaultHealthPort: 3003,
  database: { entities: eventsEntities, migrations: eventsMigrations },
  imports: [],
};

export function startEvents(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(eventsService, env);
}
