import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { eventsEntities, eventsMigrations } from './database';
import { EventLogModule } from './log/event-log.module';
import { EVENTS_SETTINGS, loadEventsSettings } from './log/events.settings';
import { EventsErasureModule } from './privacy/events-erasure';

export const eventsApp: ServiceDefinition = {
  service: ServiceName.Events,
  defaultHealthPort: 3003,
  database: { entities: eventsEntities, migrations: eventsMigrations },
  imports: [EventLogModule, EventsErasureModule],
  settings: { token: EVENTS_SETTINGS, load: loadEventsSettings },
};

export function startEvents(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(eventsApp, env);
}
