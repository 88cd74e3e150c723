import type { ExportPageRequest } from '../exports/exports';
import { PageQuery, SortablePageQuery } from '../paging';
import {
  ActivitySummaryView,
  ActivityView,
  CompanyView,
  ContactSummaryView,
  ContactView,
  CreateActivityDto,
  CreateCompanyDto,
  CreateContactDto,
  CreateTaskDto,
  CreateUserDto,
  ListActivitiesQuery,
  ListCompaniesQuery,
  ListContactsQuery,
  ListTasksQuery,
  ListUsersQuery,
  MergeContactsDto,
  ResolveContactsDto,
  ResolveContactsReply,
  TaskSummaryView,
  TaskView,
  UpdateActivityDto,
  UpdateCompanyDto,
  UpdateContactDto,
  UpdateTaskDto,
  UpdateUserDto,
  UserForSubjectDto,
  UserForSubjectReply,
  UserView,
} from '../contacts';
import { ContactDealItem } from '../deals';
import { AppendImportRowsRequest, CreateImportQuery, FailImportRequest, ImportFormat, ImportView } from '../imports';
import { QueryFieldsReply, QueryFieldsRequest, RemoteMatchReply, RemoteMatchRequest, RemoteValuesReply, RemoteValuesRequest } from '../query/record-query.dto';
import { AddContactCompanyDto, CompanyContactItem, ContactCompanyItem, ContactCompanyView } from '../associations/associations';
import { internal, noContent, Operation, page, PageOf, resource, ResourceOf, route } from './operation';
import { associationRoutes, batchRoute, changesRoute, queryRoute, recordRoutes } from './shared';

const contactCompanies = associationRoutes({
  service: 'contacts',
  name: 'contacts.contact_companies',
  owner: '/contacts/:id',
  param: 'company_id',
  nouns: { owner: 'contact', target: 'company', targets: 'companies', field: 'company_id' },
  body: AddContactCompanyDto,
  view: ContactCompanyView,
  item: ContactCompanyItem,
});

export const contacts = {
  create: route({
    service: 'contacts',
    name: 'contacts.contacts.create',
    method: 'POST',
    path: '/contacts',
    summary: 'Create a contact',
    access: 'write',
    body: CreateContactDto,
    reply: resource(ContactSummaryView, { warnings: true }),
  }),
  list: route({
    service: 'contacts',
    name: 'contacts.contacts.list',
    method: 'GET',
    path: '/contacts',
    summary: 'List contacts',
    access: 'read',
    query: ListContactsQuery,
    reply: page(ContactSummaryView),
    mcp: {
      tool: 'search_contacts',
      title: 'Search contacts',
      description:
        'List contacts, newest first, with every filter of GET /contacts (search text, stage, source, company, owner, ICP score and date ranges) and cursor pagination.',
    },
  }),
  query: queryRoute('contacts', 'contacts.contacts.query', '/contacts/query', ContactSummaryView, 'contacts'),
  batch: batchRoute('contacts', 'contacts.contacts.batch', '/contacts/batch', 'contacts', ContactView, ContactSummaryView),
  merge: route({
    service: 'contacts',
    name: 'contacts.contacts.merge',
    method: 'POST',
    path: '/contacts/merge',
    status: 200,
    summary: 'Merge two contacts into the winner',
    access: 'write',
    body: MergeContactsDto,
    reply: resource(ContactView, { included: true }),
    idempotent: true,
    via: 'merge',
    errors: { 404: 'The winner or the loser does not exist (`not_found`).' },
    mcp: {
      tool: 'merge_contacts',
      title: 'Merge two contacts',
      description: "Moves the loser's deals, activities and tasks to the winner and deletes the loser. Cannot be undone.",
      destructive: true,
    },
  }),
  get: route({
    service: 'contacts',
    name: 'contacts.contacts.get',
    method: 'GET',
    path: '/contacts/:id',
    summary: 'Get a contact',
    access: 'read',
    reply: resource(ContactView, { included: true }),
  }),
  update: route({
    service: 'contacts',
    name: 'contacts.contacts.update',
    method: 'PATCH',
    path: '/contacts/:id',
    summary: 'Update a contact',
    access: 'write',
    body: UpdateContactDto,
    reply: resource(ContactView, { included: true, warnings: true }),
  }),
  remove: route({
    service: 'contacts',
    name: 'contacts.contacts.delete',
    method: 'DELETE',
    path: '/contacts/:id',
    summary: 'Delete a contact',
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute('contacts', 'contacts.contacts.changes', '/contacts/:id/changes', 'a contact'),
  deals: route({
    service: 'contacts',
    name: 'contacts.contacts.deals',
    method: 'GET',
    path: '/contacts/:id/deals',
    summary: "List every deal a contact is associated with, primary or not, with the association's role",
    access: 'read',
    query: SortablePageQuery,
    reply: page(ContactDealItem),
  }),
  activities: route({
    service: 'contacts',
    name: 'contacts.contacts.activities',
    method: 'GET',
    path: '/contacts/:id/activities',
    summary: "List a contact's activities",
    access: 'read',
    query: SortablePageQuery,
    reply: page(ActivitySummaryView),
  }),
  tasks: route({
    service: 'contacts',
    name: 'contacts.contacts.tasks',
    method: 'GET',
    path: '/contacts/:id/tasks',
    summary: "List a contact's tasks",
    access: 'read',
    query: SortablePageQuery,
    reply: page(TaskSummaryView),
  }),
  addCompany: contactCompanies.add,
  companies: contactCompanies.list,
  updateCompany: contactCompanies.update,
  removeCompany: contactCompanies.remove,
};

export const companies = {
  create: route({
    service: 'contacts',
    name: 'contacts.companies.create',
    method: 'POST',
    path: '/companies',
    summary: 'Create a company',
    access: 'write',
    body: CreateCompanyDto,
    reply: resource(CompanyView, { warnings: true }),
  }),
  list: route({
    service: 'contacts',
    name: 'contacts.companies.list',
    method: 'GET',
    path: '/companies',
    summary: 'List companies',
    access: 'read',
    query: ListCompaniesQuery,
    reply: page(CompanyView),
  }),
  query: queryRoute('contacts', 'contacts.companies.query', '/companies/query', CompanyView, 'companies'),
  batch: batchRoute('contacts', 'contacts.companies.batch', '/companies/batch', 'companies', CompanyView),
  get: route({
    service: 'contacts',
    name: 'contacts.companies.get',
    method: 'GET',
    path: '/companies/:id',
    summary: 'Get a company',
    access: 'read',
    reply: resource(CompanyView),
  }),
  update: route({
    service: 'contacts',
    name: 'contacts.companies.update',
    method: 'PATCH',
    path: '/companies/:id',
    summary: 'Update a company',
    access: 'write',
    body: UpdateCompanyDto,
    reply: resource(CompanyView, { warnings: true }),
  }),
  remove: route({
    service: 'contacts',
    name: 'contacts.companies.delete',
    method: 'DELETE',
    path: '/companies/:id',
    summary: 'Delete a company',
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute('contacts', 'contacts.companies.changes', '/companies/:id/changes', 'a company'),
  contacts: route({
    service: 'contacts',
    name: 'contacts.companies.contacts',
    method: 'GET',
    path: '/companies/:id/contacts',
    summary: "List a company's associated contacts with their roles",
    access: 'read',
    query: PageQuery,
    reply: page(CompanyContactItem),
  }),
};

export const users = {
  create: route({
    service: 'contacts',
    name: 'contacts.users.create',
    method: 'POST',
    path: '/users',
    summary: 'Add a team member',
    access: 'write',
    body: CreateUserDto,
    reply: resource(UserView),
  }),
  list: route({
    service: 'contacts',
    name: 'contacts.users.list',
    method: 'GET',
    path: '/users',
    summary: 'List team members',
    access: 'read',
    query: ListUsersQuery,
    reply: page(UserView),
  }),
  query: queryRoute('contacts', 'contacts.users.query', '/users/query', UserView, 'team members'),
  get: route({
    service: 'contacts',
    name: 'contacts.users.get',
    method: 'GET',
    path: '/users/:id',
    summary: 'Get a team member',
    access: 'read',
    reply: resource(UserView),
  }),
  update: route({
    service: 'contacts',
    name: 'contacts.users.update',
    method: 'PATCH',
    path: '/users/:id',
    summary: 'Update a team member',
    access: 'write',
    body: UpdateUserDto,
    reply: resource(UserView),
  }),
  remove: route({
    service: 'contacts',
    name: 'contacts.users.delete',
    method: 'DELETE',
    path: '/users/:id',
    summary: 'Remove a team member',
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute('contacts', 'contacts.users.changes', '/users/:id/changes', 'a team member'),
};

export const imports = {
  /**
   * A custom route: the gateway streams the upload into the job this creates (body: the upload's format),
   * with `importSteps`, so neither side holds the whole file.
   */
  create: route({
    service: 'contacts',
    name: 'contacts.imports.create',
    method: 'POST',
    path: '/imports',
    status: 202,
    summary: 'Import contacts or companies from CSV or NDJSON (up to 50 MB), applied in the background',
    access: 'write',
    query: CreateImportQuery,
    reply: resource(ImportView),
    custom: true,
  }) as Operation<Record<never, string>, CreateImportQuery, { format: ImportFormat }, ResourceOf<ImportView>>,
  list: route({
    service: 'contacts',
    name: 'contacts.imports.list',
    method: 'GET',
    path: '/imports',
    summary: 'List imports',
    access: 'read',
    query: SortablePageQuery,
    reply: page(ImportView),
  }),
  get: route({
    service: 'contacts',
    name: 'contacts.imports.get',
    method: 'GET',
    path: '/imports/:id',
    summary: 'Get an import: status, progress counts and the first row errors',
    access: 'read',
    reply: resource(ImportView),
  }),
};

/** The steps of a streamed upload after `imports.create`; the gateway calls them, no route reaches them. */
export const importSteps = {
  appendRows: internal<AppendImportRowsRequest, void>({ service: 'contacts', name: 'contacts.imports.append_rows' }),
  start: internal<null, { data: ImportView }>({ service: 'contacts', name: 'contacts.imports.start' }),
  fail: internal<FailImportRequest, { data: ImportView }>({ service: 'contacts', name: 'contacts.imports.fail' }),
};

export const activities = recordRoutes(
  'contacts',
  'activities',
  ['an activity', 'activities'],
  ActivityView,
  { create: CreateActivityDto, update: UpdateActivityDto, list: ListActivitiesQuery },
  'Log an activity',
);
export const tasks = recordRoutes(
  'contacts',
  'tasks',
  ['a task', 'tasks'],
  TaskView,
  { create: CreateTaskDto, update: UpdateTaskDto, list: ListTasksQuery },
  'Create a task',
);

/** Requests between services; no HTTP route reaches them. */
export const contactsInternal = {
  /** Which of the given contact, company and user ids exist, with their display names. Unknown ids are left out. */
  resolve: internal<ResolveContactsDto, ResolveContactsReply>({
    service: 'contacts',
    name: 'contacts.internal.resolve',
    body: ResolveContactsDto,
    idempotent: true,
  }),
  /** Conditions of another service's query on contacts, companies or users (`contact.email` on deals), answered with ids. */
  queryMatch: internal<RemoteMatchRequest, RemoteMatchReply>({ service: 'contacts', name: 'contacts.internal.query_match', idempotent: true }),
  /** Paths of contacts, companies or users another service's query returns (`fields: ["contact.email"]`). */
  queryValues: internal<RemoteValuesRequest, RemoteValuesReply>({ service: 'contacts', name: 'contacts.internal.query_values', idempotent: true }),
  /** The paths a query over contacts, companies, users, activities, tasks or a custom object may name (MCP's describe_object). */
  queryFields: internal<QueryFieldsRequest, QueryFieldsReply>({ service: 'contacts', name: 'contacts.internal.query_fields', idempotent: true }),
  /** A page of an object's rows for an export (docs/exports.md): in id order, each with its version. */
  exportPage: internal<ExportPageRequest, PageOf<Record<string, unknown>>>({ service: 'contacts', name: 'contacts.internal.export_page', idempotent: true }),
  /** The team member whose external_id is a bearer token's subject, if any: the gateway's actor for the token. */
  userForSubject: internal<UserForSubjectDto, UserForSubjectReply>({
    service: 'contacts',
    name: 'contacts.internal.user_for_subject',
    body: UserForSubjectDto,
    idempotent: true,
  }),
};
