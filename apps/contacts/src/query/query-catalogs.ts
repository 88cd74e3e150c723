import { ACTIVITY_STATUSES, ACTIVITY_TYPES, CONTACT_SOURCES, CONTACT_STAGES, TASK_PRIORITIES, TASK_STATUSES, USER_ROLES } from '@crm/contracts';
import { BuiltInCustomFieldsService, CatalogSpec, catalogOf, QueryCatalog, QueryTable, relatedCatalogOf } from '@crm/runtime';
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

/** Activities and tasks reach their deal, which the deals service keeps and answers for. */
const DEAL = { name: 'deal', column: 'deal_id', object: 'deals', via: 'deals' } as const;

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
    remotes: [DEAL],
  },
  tasks: {
    entity: Task,
    alias: 't',
    enums: { priority: TASK_PRIORITIES, status: TASK_STATUSES },
    present: presentTask,
    relations: [{ name: 'contact', table: CONTACTS, column: 'contact_id' }],
    remotes: [DEAL],
  },
} satisfies Record<string, Omit<CatalogSpec, 'object'>>;

export type QueryableObject = keyof typeof OBJECTS;

/** What other services' queries may reach one hop away: a deal's contact, company and owner. */
const RELATED_OBJECTS: readonly QueryableObject[] = ['contacts', 'companies', 'users'];

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
    return catalogOf(this.dataSource, { object, ...OBJECTS[object], customFields: await this.definitions(object) } as CatalogSpec);
  }

  /** An object as another service's query reaches it through a relation named `prefix` (`contact.email`). */
  async related(object: string, prefix: string): Promise<QueryCatalog> {
    const related = RELATED_OBJECTS.find((o) => o === object);
    if (!related) throw new Error(`the contacts service answers other services' queries on ${RELATED_OBJECTS.join(', ')}, not '${object}'`);
    return relatedCatalogOf(this.dataSource, { object: related, ...OBJECTS[related], customFields: await this.definitions(related) }, prefix);
  }

  private async definitions(object: QueryableObject) {
    return WITHOUT_CUSTOM_FIELDS.has(object) ? undefined : (await this.customFieldDefinitions.state(this.dataSource.manager, object)).fields;
  }
}
