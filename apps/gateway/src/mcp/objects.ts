import { AnyOperation, builtInEntry, hasCapability, ObjectService, Ops, SlugWith } from '@crm/contracts';

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

/** Who describes an object's query paths: the service that keeps it. */
const FIELDS = { contacts: Ops.contactsInternal.queryFields, deals: Ops.dealsInternal.queryFields } satisfies Record<ObjectService, AnyOperation>;

/** The registry's queryable objects by slug, in the operation table's order, each run by its group there (team members have no batch route, so no upsert). */
export const BUILT_IN_OBJECTS: Readonly<Record<string, ObjectRoutes>> = Object.fromEntries(
  Object.keys(Ops)
    .filter((group): group is SlugWith<'queryable'> => hasCapability(group, 'queryable'))
    .map((slug) => {
      const object = builtInEntry(slug)!;
      const group: Record<string, AnyOperation> = Ops[slug];
      const routes: ObjectRoutes = {
        one: object.one,
        get: group.get,
        create: group.create,
        update: group.update,
        remove: group.remove,
        query: group.query,
        ...(hasCapability(slug, 'batchable') ? { batch: group.batch } : {}),
        fields: FIELDS[object.service],
      };
      return [slug, routes];
    }),
);

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
  // A deal's own lines (docs/products.md): written with write_line_items.
  'deals.line_items': { list: Ops.lineItems.list },
  'companies.contacts': { list: Ops.companies.contacts },
};

export function builtIn(object: string): ObjectRoutes | undefined {
  return Object.hasOwn(BUILT_IN_OBJECTS, object) ? BUILT_IN_OBJECTS[object] : undefined;
}

/** Whether upsert_records on this object runs a batch route (a slug not built in is a custom object's). */
export function hasBatch(object: unknown): boolean {
  return typeof object === 'string' && (builtIn(object) ? Boolean(builtIn(object)!.batch) : true);
}
