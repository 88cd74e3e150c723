import { ServiceName } from '@crm/contracts';
import { recordsRetention } from '@crm/records';
import { contactsTables } from './database/tables';
import { RunningService, ServiceDefinition, startService } from '@crm/runtime';
import { ActivitiesModule } from './activities/activities.module';
import { CaptureModule } from './capture/capture.module';
import { CompaniesModule } from './companies/companies.module';
import { ImportsModule } from './imports/imports.module';
import { UsersModule } from './users/users.module';
import { ContactsModule } from './contacts/contacts.module';
import { WorkLinksModule } from './work-links/work-links.module';
import { contactsEntities, contactsMigrations } from './database';
import { ObjectsModule } from './objects/objects.module';
import { SchemaModule } from './schema/schema.module';
import { TasksModule } from './tasks/tasks.module';
import { QueryModule } from './query/query.module';
import { ChangesModule } from './changes/changes.module';
import { SearchModule } from './search/search.module';
import { PrivacyModule } from './privacy/privacy.module';
import { CONTACTS_SETTINGS, loadContactsSettings } from './contacts.settings';

export const contactsApp: ServiceDefinition = {
  service: ServiceName.Contacts,
  defaultHealthPort: 3001,
  database: { entities: contactsEntities, migrations: contactsMigrations },
  retention: { tables: contactsTables, settings: recordsRetention },
  settings: { token: CONTACTS_SETTINGS, load: loadContactsSettings },
  imports: [
    WorkLinksModule,
    ObjectsModule,
    ContactsModule,
    CompaniesModule,
    ActivitiesModule,
    TasksModule,
    SchemaModule,
    CaptureModule,
    UsersModule,
    ImportsModule,
    QueryModule,
    ChangesModule,
    SearchModule,
    PrivacyModule,
  ],
};

export function startContacts(env?: Record<string, string | undefined>): Promise<RunningService> {
  return startService(contactsApp, env);
}
