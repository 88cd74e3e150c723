import {
  ACTIVITY_STATUSES,
  ACTIVITY_TYPES,
  builtInObject,
  CONTACT_SOURCES,
  CONTACT_STAGES,
  hasCapability,
  keptBy,
  objectResource,
  SlugKeptBy,
  SlugWith,
  TASK_PRIORITIES,
  TASK_STATUSES,
  USER_ROLES,
} from '@crm/contracts';
import { hydrate } from '@crm/common';
import {
  BuiltInCustomFieldsService,
  catalogOf,
  CatalogSpec,
  customFields,
  entityFields,
  QueryCatalog,
  QueryField,
  QueryableBy,
  QueryTable,
  quoted,
  RecordCatalogs,
  relatedCatalogOf,
  RemoteRelation,
} from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Activity } from '../activities/activity.entity';
import { presentActivity } from '../activities/activity.presenter';
import { Company } from '../companies/company.entity';
import { presentCompany } from '../companies/company.presenter';
import { Contact } from '../contacts/contact.entity';
import { builtInRecords } from '../objects/object-records.service';
import { ObjectRecord } from '../objects/object-type.entity';
import { presentRecord } from '../objects/object-type.presenter';
import { ObjectTypesService } from '../objects/object-types.service';
import { presentContactSummary } from '../contacts/contact.presenter';
import { Task } from '../tasks/task.entity';
import { presentTask } from '../tasks/task.presenter';
import { User } from '../users/user.entity';
import { presentUser } from '../users/user.presenter';

const CONTACTS: QueryTable = { entity: Contact, alias: 'c', enums: { stage: CONTACT_STAGES, source: CONTACT_SOURCES }, folded: ['email'] };
const COMPANIES: QueryTable = { entity: Company, alias: 'co', folded: ['domain'] };
const USERS: QueryTable = { entity: User, alias: 'u', enums: { role: USER_ROLES }, folded: ['email'] };
const ACTIVITIES: QueryTable = { entity: Activity, alias: 'a', enums: { type: ACTIVITY_TYPES, status: ACTIVITY_STATUSES } };
const TASKS: QueryTable = { entity: Task, alias: 't', enums: { priority: TASK_PRIORITIES, status: TASK_STATUSES } };

/** Activities and tasks reach their deal, which the deals service keeps and answers for. */
const DEAL = { name: 'deal', column: 'deal_id', object: 'deals', via: 'deals' } as const;

/** The objects of this service a client can query (the registry's queryable ones), and the records one hop away. */
export type QueryableObject = QueryableBy<'contacts'>;

/** Activities and tasks: each names its contact, and its deal in the deals service. */
const workItem = (table: QueryTable, present: CatalogSpec['present']): Omit<CatalogSpec, 'object'> => ({
  ...table,
  present,
  relations: [{ name: 'contact', table: CONTACTS, column: 'contact_id' }],
  remotes: [DEAL],
});

const OBJECTS: Record<QueryableObject, Omit<CatalogSpec, 'object'>> = {
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
  activities: workItem(ACTIVITIES, presentActivity),
  tasks: workItem(TASKS, presentTask),
};

export function isQueryableObject(object: string): object is QueryableObject {
  return hasCapability(object, 'queryable') && keptBy(object, 'contacts');
}

/** What other services' queries may reach one hop away: a deal's contact, company and owner. */
const RELATED_OBJECTS: readonly QueryableObject[] = ['contacts', 'companies', 'users'];

/** Built-in records of this service a custom object's reference field may name, joined when a query reaches them. */
const REFERENCE_TABLES: Record<SlugWith<'referenceable'> & SlugKeptBy<'contacts'>, QueryTable> = {
  contacts: CONTACTS,
  companies: COMPANIES,
  activities: ACTIVITIES,
  tasks: TASKS,
};

/**
 * What a query over each object of this service may name. Custom field definitions are read for each
 * query, so a field defined a moment ago can be queried at once.
 */
@Injectable()
export class QueryCatalogs extends RecordCatalogs<'contacts'> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly customFieldDefinitions: BuiltInCustomFieldsService,
    private readonly types: ObjectTypesService,
  ) {
    super();
  }

  /** What MCP's describe_object lists: a built-in object's catalog, or a custom object's records'. */
  described(object: string): Promise<QueryCatalog> {
    return isQueryableObject(object) ? this.of(object) : this.records(object);
  }

  /**
   * A custom object's records: `values.<name>` typed by the object's fields, and through each reference
   * field `values.<ref>.*` the record it names: a contact, company, activity or task (joined here), a
   * deal (asked of the deals service), or a custom object record (`values.<ref>.values.<name>`).
   */
  async records(slug: string): Promise<QueryCatalog> {
    if (builtInObject(slug)) throw builtInRecords(slug);
    const m = this.dataSource.manager;
    const type = await this.types.find(m, slug);
    const a = 'r';
    const fields = [
      ...entityFields(m.connection.getMetadata(ObjectRecord), a, { exclude: ['object_type_id'] }),
      ...customFields(type.fields, `${a}."values"`, 'values.'),
    ];
    const joins: Record<string, { alias: string; clause: string }> = {};
    const remotes: Record<string, RemoteRelation> = {};
    const relationResources: Record<string, string> = {};
    for (const [i, def] of type.fields.entries()) {
      if (def.type !== 'reference' || !def.reference_target) continue;
      const name = `values.${def.name}`;
      relationResources[name] = objectResource(def.reference_target);
      const id = `(${a}."values"->>${quoted(def.name)})`;
      const joined = `${a}_j${i}`;
      const target = def.reference_target;
      if (keptBy(target, 'deals')) {
        // The deals service answers for the records it keeps (and refuses, by name, an object it cannot query).
        remotes[name] = { column: id, object: target, via: 'deals' };
      } else if (Object.hasOwn(REFERENCE_TABLES, target)) {
        const table = REFERENCE_TABLES[target as keyof typeof REFERENCE_TABLES];
        const metadata = m.connection.getMetadata(table.entity);
        joins[name] = { alias: joined, clause: `LEFT JOIN ${metadata.tablePath} ${joined} ON ${joined}.id = ${id}` };
        fields.push(
          ...entityFields(metadata, joined, {
            enums: table.enums,
            folded: table.folded,
            prefix: `${name}.`,
            join: name,
          }).filter(([, f]) => f.type !== 'json'),
        );
      } else {
        const referenced = await this.types.find(m, target).catch(() => undefined);
        if (!referenced) continue;
        joins[name] = {
          alias: joined,
          clause: `LEFT JOIN object_records ${joined} ON ${joined}.id = ${id} AND ${joined}.object_type_id = ${quoted(referenced.id)}`,
        };
        fields.push(
          ...entityFields(m.connection.getMetadata(ObjectRecord), joined, { exclude: ['object_type_id', 'values'], prefix: `${name}.`, join: name }),
          ...customFields(referenced.fields, `${joined}."values"`, `${name}.values.`).map(([path, f]): [string, QueryField] => [path, { ...f, join: name }]),
        );
      }
    }
    return {
      object: slug,
      table: 'object_records',
      alias: a,
      scope: `${a}.object_type_id = ${quoted(type.id)}`,
      fields: new Map(fields),
      joins,
      remotes,
      relationResources,
      present: (row) => presentRecord(hydrate(m, ObjectRecord, row), type),
    };
  }

  /** The object's catalog; `withCustomFields` false leaves out its custom fields (and the read of their definitions). */
  async of(object: QueryableObject, withCustomFields = true): Promise<QueryCatalog> {
    const customFields = withCustomFields ? await this.definitions(object) : undefined;
    return catalogOf(this.dataSource, { object, ...OBJECTS[object], customFields } as CatalogSpec);
  }

  /** An object as another service's query reaches it through a relation named `prefix` (`contact.email`). */
  async related(object: string, prefix: string): Promise<QueryCatalog> {
    const related = RELATED_OBJECTS.find((o) => o === object);
    if (!related) throw new Error(`the contacts service answers other services' queries on ${RELATED_OBJECTS.join(', ')}, not '${object}'`);
    return relatedCatalogOf(this.dataSource, { object: related, ...OBJECTS[related], customFields: await this.definitions(related) }, prefix);
  }

  private async definitions(object: QueryableObject) {
    return hasCapability(object, 'customFields') ? (await this.customFieldDefinitions.state(this.dataSource.manager, object)).fields : undefined;
  }
}
