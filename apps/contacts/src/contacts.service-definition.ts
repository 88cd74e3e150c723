import { ServiceName } from '@crm/contracts';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { contactsEntities, contactsMigrations } from './database';

export const contactsService: ServiceDefinition = {
  service: ServiceName.Contacts,
  defaultHealthPort: 3001,
  database: { entities: contactsEntities, migrations: contactsMigrations },
  imports: [],
};

export function startContacts(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(contactsService, env);
}
