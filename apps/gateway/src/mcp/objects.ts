import { AnyOperation, Ops } from '@crm/contracts';

/** The routes of one kind of object that the record tools run; a custom object's take its slug. */
export interface ObjectRoutes {
  /** Singular noun, as an agent reads it. */
  one: string;
  get: AnyOperation;
  create: AnyOperation;
  update: AnyOperation;
  remove: AnyOperation;
  query: AnyOperation;
  /** `POST /<object>/batch`, when the object has one: what upsert_records runs. */
  batch?: AnyOperation;
  /** Who describes its query paths (the service that keeps it). */
  fields: typeof Ops.contactsInternal.queryFields | typeof Ops.dealsInternal.queryFields;
}

const kept = (group: { get: AnyOperation; create: AnyOperation; update: AnyOperation; remove: AnyOperation; query: AnyOperation }) => ({
  get: group.get,
  create: group.create,
  update: group.update,
  remove: group.remove,
  query: group.query,
});

/** The built-in objects by slug. Team members have no batch route, so no upsert. */
export const BUILT_IN_OBJECTS: Readonly<Record<string, ObjectRoutes>> = {
  contacts: { one: 'contact', ...kept(Ops.contacts), batch: Ops.contacts.batch, fields: Ops.contactsInternal.queryFields },
  companies: { one: 'company', ...kept(Ops.companies), batch: Ops.companies.batch, fields: Ops.contactsInternal.queryFields },
  users: { one: 'user', ...kept(Ops.users), fields: Ops.contactsInternal.queryFields },
  activities: { one: 'activity', ...kept(Ops.activities), batch: Ops.activities.batch, fields: Ops.contactsInternal.queryFields },
  tasks: { one: 'task', ...kept(Ops.tasks), batch: Ops.tasks.batch, fields: Ops.contactsInternal.queryFields },
  deals: { one: 'deal', ...kept(Ops.deals), batch: Ops.deals.batch, fields: Ops.dealsInternal.queryFields },
};

/** Any custom object's records, at /objects/:slug/records. */
export const CUSTOM_OBJECT: ObjectRoutes = {
  one: 'record',
  get: Ops.objects.getRecord,
  create: Ops.objects.createRecord,
  update: Ops.objects.updateRecord,
  remove: Ops.objects.removeRecord,
  query: Ops.objects.queryRecords,
  batch: Ops.objects.batchRecords,
  fields: Ops.contactsInternal.queryFields,
};

/** An association type as the association tools reach it from one side; only the owning side may change it. */
export interface AssociationRoutes {
  list: AnyOperation;
  /** The body field and path parameter naming the related record. */
  param?: string;
  add?: AnyOperation;
  update?: AnyOperation;
  remove?: AnyOperation;
}

/** By `<object>.<related>`. */
export const ASSOCIATIONS: Readonly<Record<string, AssociationRoutes>> = {
  'contacts.companies': {
    list: Ops.contacts.companies,
    param: 'company_id',
    add: Ops.contacts.addCompany,
    update: Ops.contacts.updateCompany,
    remove: Ops.contacts.removeCompany,
  },
  'deals.contacts': {
    list: Ops.deals.contacts,
    param: 'contact_id',
    add: Ops.deals.addContact,
    update: Ops.deals.updateContact,
    remove: Ops.deals.removeContact,
  },
  'contacts.deals': { list: Ops.contacts.deals },
  'companies.contacts': { list: Ops.companies.contacts },
};

export function builtIn(object: string): ObjectRoutes | undefined {
  return Object.hasOwn(BUILT_IN_OBJECTS, object) ? BUILT_IN_OBJECTS[object] : undefined;
}

/** Whether upsert_records on this object runs a batch route (a slug not built in is a custom object's). */
export function hasBatch(object: unknown): boolean {
  return typeof object === 'string' && (builtIn(object) ? Boolean(builtIn(object)!.batch) : true);
}
