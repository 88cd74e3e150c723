import { ServiceName } from '@crm/contracts';
import { eventsTables } from './database/tables';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { eventsEntities, eventsMigrations } from './database';
import { ExportsModule } from './exports/exports.module';
import { EventLogModule } from './log/event-log.module';
import { EVENTS_SETTINGS, loadEventsSettings } from './log/events.settings';
import { EventsErasureModule } from './privacy/events-erasure';

export const eventsApp: ServiceDefinition = {
  service: ServiceName.Events,
  defaultHealthPort: 3003,
  database: { entities: eventsEntities, migrations: eventsMigrations },
  // Its tables are swept by the log's own prune (EventRetention) or kept: the service's sweep has nothing to do.
  retention: { tables: eventsTables, settings: () => ({ intervalMs: 3_600_000, batchSize: 1000, days: {} }) },
  imports: [EventLogModule, EventsErasureModule, ExportsModule],
  settings: { token: EVENTS_SETTINGS, load: loadEventsSettings },
};

export function startEvents(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(eventsApp, env);
}
