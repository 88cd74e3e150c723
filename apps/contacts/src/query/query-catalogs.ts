import { ACTIVITY_STATUSES, ACTIVITY_TYPES, CONTACT_SOURCES, CONTACT_STAGES, TASK_PRIORITIES, TASK_STATUSES, USER_ROLES } from '@crm/contracts';
import { BuiltInCustomFieldsService, CatalogSpec, catalogOf, QueryCatalog, QueryTable } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Activity } from '../activities/activity.entity';
import { presentActivity } from '../activities/activity.presenter';
import { Company } from '../companies/company.entity';
import { presentCompany } from '../companies/company.presenter';
import { Contact } from '../contacts/contact.entity';
import { presentContactSummary } from '../contacts/contact.presenter';
import { Task } from '../tasks/task.entity';
import { presentTask } from '../tasks/task.presenter';
import { User } from '../users/user.entity';
import { presentUser } from '../users/user.presenter';

const CONTACTS: QueryTable = { entity: Contact, alias: 'c', enums: { stage: CONTACT_STAGES, source: CONTACT_SOURCES } };
const COMPANIES: QueryTable = { entity: Company, alias: 'co' };
const USERS: QueryTable = { entity: User, alias: 'u', enums: { role: USER_ROLES } };

/** The objects of this service a client can query, with the records one hop away. */
const OBJECTS = {
  contacts: {
    ...CONTACTS,
    present: presentContactSummary,
    relations: [
      { name: 'company', table: COMPANIES, column: 'company_id' },
      { name: 'owner', table: USERS, column: 'owner_id' },
    ],
  },
  companies: { ...COMPANIES, present: presentCompany },
  users: { ...USERS, present: presentUser },
  activities: {
    entity: Activity,
    alias: 'a',
    enums: { type: ACTIVITY_TYPES, status: ACTIVITY_STATUSES },
    present: presentActivity,
    relations: [{ name: 'contact', table: CONTACTS, column: 'contact_id' }],
  },
  tasks: {
    entity: Task,
    alias: 't',
    enums: { priority: TASK_PRIORITIES, status: TASK_STATUSES },
    present: presentTask,
    relations: [{ name: 'contact', table: CONTACTS, column: 'contact_id' }],
  },
} satisfies Record<string, Omit<CatalogSpec, 'object'>>;

export type QueryableObject = keyof typeof OBJECTS;

/** Users have no custom fields; the other objects keep theirs through BuiltInCustomFieldsService. */
const WITHOUT_CUSTOM_FIELDS = new Set<QueryableObject>(['users']);

/**
 * What a query over each object of this service may name. Custom field definitions are read for each
 * query, so a field defined a moment ago can be queried at once.
 */
@Injectable()
export class QueryCatalogs {
  constructor(
    private readonly dataSource: DataSource,
    private readonly customFieldDefinitions: BuiltInCustomFieldsService,
  ) {}

  async of(object: QueryableObject): Promise<QueryCatalog> {
    const customFields = WITHOUT_CUSTOM_FIELDS.has(object) ? undefined : (await this.customFieldDefinitions.state(this.dataSource.manager, object)).fields;
    return catalogOf(this.dataSource, { object, ...OBJECTS[object], customFields } as CatalogSpec);
  }
}
