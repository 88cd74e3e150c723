import { CreateActivityDto, UpdateActivityDto } from '../contacts/activity.dto';
import { CreateCompanyDto, UpdateCompanyDto } from '../contacts/company.dto';
import { CreateContactDto, UpdateContactDto } from '../contacts/contact.dto';
import { CreateTaskDto, UpdateTaskDto } from '../contacts/task.dto';
import { CreateUserDto, UpdateUserDto } from '../contacts/user.dto';
import { CreateDealDto, UpdateDealDto } from '../deals/deal.dto';
import { CreatePipelineDto, StageInputDto, UpdatePipelineDto } from '../deals/pipeline.dto';
import { IdPrefix } from '../ids';
import { CreateProductDto, UpdateProductDto } from '../products/product.dto';

/** The services that keep records of an object. */
export const OBJECT_SERVICES = ['contacts', 'deals'] as const;
export type ObjectService = (typeof OBJECT_SERVICES)[number];

/**
 * What an object takes part in:
 * - `schema`: GET /schema describes it (team members are not part of the data model);
 * - `customFields`: POST /objects/:slug/fields may add fields to it;
 * - `referenceable`: a reference field may name its records;
 * - `importable`: POST /imports loads it;
 * - `queryable`: it has `POST /<slug>/query`;
 * - `batchable`: it has `POST /<slug>/batch`;
 * - `history`: its changes are kept (GET /<slug>/:id/changes, GET /changes?object=);
 * - `searchable`: GET /search ranks its records (a custom object is searched when it has searchable fields).
 */
export const CAPABILITIES = ['schema', 'customFields', 'referenceable', 'importable', 'queryable', 'batchable', 'history', 'searchable'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** One object, built-in or custom: everything the lists of objects across the services are read from. */
export interface ObjectEntry {
  slug: string;
  /** Display name, as GET /schema shows it. */
  name: string;
  /** Nouns as prose uses them: `company`, `companies`. */
  one: string;
  many: string;
  prefix: IdPrefix;
  service: ObjectService;
  kind: 'built_in' | 'custom';
  /** The request classes that validate its writes; GET /schema describes its fields from them. */
  create?: Function;
  update?: Function;
  capabilities: readonly Capability[];
  /** The permission resource its records are read and written under, when not its slug (stages: their pipeline's). */
  permission?: string;
  /** How `Ops.contactsInternal.resolve` is asked whether its records exist, for another service's checks. */
  resolvedAs?: { request: 'contact_ids' | 'company_ids' | 'user_ids'; reply: 'contacts' | 'companies' | 'users' };
  /**
   * How GET /search finds and shows its records, for an object whose service derives its search target
   * from here (the deals service): the column its title shows, the one its subtitle shows, and the text
   * columns its word index is built on (`searchWords` in libs/records, which its migration indexes).
   */
  search?: { title: string; subtitle: string; columns: readonly string[] };
}

const RECORDS = ['schema', 'customFields', 'referenceable', 'queryable', 'batchable', 'history'] as const;

/**
 * Every built-in object, once. Its order is the order GET /schema lists them in. Adding an object is an
 * entry here (docs/architecture.md, "Adding an object"); the lists each service keeps are derived below.
 */
const REGISTRY = {
  contacts: {
    slug: 'contacts',
    name: 'Contact',
    one: 'contact',
    many: 'contacts',
    prefix: IdPrefix.Contact,
    service: 'contacts',
    kind: 'built_in',
    create: CreateContactDto,
    update: UpdateContactDto,
    capabilities: [...RECORDS, 'importable', 'searchable'],
    resolvedAs: { request: 'contact_ids', reply: 'contacts' },
  },
  companies: {
    slug: 'companies',
    name: 'Company',
    one: 'company',
    many: 'companies',
    prefix: IdPrefix.Company,
    service: 'contacts',
    kind: 'built_in',
    create: CreateCompanyDto,
    update: UpdateCompanyDto,
    capabilities: [...RECORDS, 'importable', 'searchable'],
    resolvedAs: { request: 'company_ids', reply: 'companies' },
  },
  deals: {
    slug: 'deals',
    name: 'Deal',
    one: 'deal',
    many: 'deals',
    prefix: IdPrefix.Deal,
    service: 'deals',
    kind: 'built_in',
    create: CreateDealDto,
    update: UpdateDealDto,
    capabilities: [...RECORDS, 'importable', 'searchable'],
    search: { title: 'name', subtitle: 'status', columns: ['name'] },
  },
  products: {
    slug: 'products',
    name: 'Product',
    one: 'product',
    many: 'products',
    prefix: IdPrefix.Product,
    service: 'deals',
    kind: 'built_in',
    create: CreateProductDto,
    update: UpdateProductDto,
    capabilities: ['schema', 'customFields', 'queryable', 'batchable', 'history', 'searchable'],
    search: { title: 'name', subtitle: 'sku', columns: ['name', 'sku'] },
  },
  pipelines: {
    slug: 'pipelines',
    name: 'Pipeline',
    one: 'pipeline',
    many: 'pipelines',
    prefix: IdPrefix.Pipeline,
    service: 'deals',
    kind: 'built_in',
    create: CreatePipelineDto,
    update: UpdatePipelineDto,
    capabilities: ['schema', 'customFields', 'history'],
  },
  stages: {
    slug: 'stages',
    name: 'Stage',
    one: 'stage',
    many: 'stages',
    prefix: IdPrefix.Stage,
    service: 'deals',
    kind: 'built_in',
    create: StageInputDto,
    capabilities: ['schema'],
    permission: 'pipelines',
  },
  activities: {
    slug: 'activities',
    name: 'Activity',
    one: 'activity',
    many: 'activities',
    prefix: IdPrefix.Activity,
    service: 'contacts',
    kind: 'built_in',
    create: CreateActivityDto,
    update: UpdateActivityDto,
    capabilities: [...RECORDS, 'searchable'],
  },
  tasks: {
    slug: 'tasks',
    name: 'Task',
    one: 'task',
    many: 'tasks',
    prefix: IdPrefix.Task,
    service: 'contacts',
    kind: 'built_in',
    create: CreateTaskDto,
    update: UpdateTaskDto,
    capabilities: [...RECORDS, 'searchable'],
  },
  users: {
    slug: 'users',
    name: 'User',
    one: 'user',
    many: 'users',
    prefix: IdPrefix.User,
    service: 'contacts',
    kind: 'built_in',
    create: CreateUserDto,
    update: UpdateUserDto,
    capabilities: ['queryable', 'history', 'searchable'],
    resolvedAs: { request: 'user_ids', reply: 'users' },
  },
} as const satisfies Record<string, ObjectEntry>;

type Registry = typeof REGISTRY;
export type BuiltInSlug = keyof Registry;

/** The built-in objects that have capability `C`. */
export type SlugWith<C extends Capability> = { [K in BuiltInSlug]: C extends Registry[K]['capabilities'][number] ? K : never }[BuiltInSlug];
/** The built-in objects service `S` keeps. */
export type SlugKeptBy<S extends ObjectService> = { [K in BuiltInSlug]: Registry[K]['service'] extends S ? K : never }[BuiltInSlug];

export const BUILT_IN_ENTRIES: readonly ObjectEntry[] = Object.values(REGISTRY);

export function isBuiltInSlug(slug: string): slug is BuiltInSlug {
  return Object.hasOwn(REGISTRY, slug);
}

/** A built-in object's entry, or undefined for any other slug. */
export function builtInEntry(slug: string): ObjectEntry | undefined {
  return isBuiltInSlug(slug) ? REGISTRY[slug] : undefined;
}

export function hasCapability<C extends Capability>(slug: string, capability: C): slug is SlugWith<C> {
  return (builtInEntry(slug)?.capabilities as readonly string[] | undefined)?.includes(capability) ?? false;
}

export function keptBy<S extends ObjectService>(slug: string, service: S): slug is SlugKeptBy<S> {
  return builtInEntry(slug)?.service === service;
}

/** The slugs of the built-in objects with capability `C`, in registry order, optionally only those `service` keeps. */
export function slugsWith<C extends Capability>(capability: C): SlugWith<C>[];
export function slugsWith<C extends Capability, S extends ObjectService>(capability: C, service: S): Array<SlugWith<C> & SlugKeptBy<S>>;
export function slugsWith(capability: Capability, service?: ObjectService): string[] {
  return BUILT_IN_ENTRIES.filter((o) => o.capabilities.includes(capability) && (service === undefined || o.service === service)).map((o) => o.slug);
}

/** What a custom object type has that its registry entry is built from. */
export interface CustomObjectType {
  slug: string;
  name: string;
}

/**
 * A custom object as the registry sees it: kept by the contacts service, records `rec_…`, every field a
 * custom one, queried, batched and referenced like any record, with its history kept; not imported.
 */
export function customObjectEntry(type: CustomObjectType): ObjectEntry {
  return {
    slug: type.slug,
    name: type.name,
    one: type.name.toLowerCase(),
    many: type.slug,
    prefix: IdPrefix.ObjectRecord,
    service: 'contacts',
    kind: 'custom',
    capabilities: RECORDS,
  };
}
