import { PageQuery, SortablePageQuery } from '../paging';
import {
  ActivitySummaryView,
  ActivityView,
  CaptureContactDto,
  CaptureView,
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
  UserView,
} from '../contacts';
import {
  StageInputDto,
  CreateDealDto,
  CreatePipelineDto,
  ContactDealItem,
  DealView,
  DeleteWithMoveQuery,
  FullDealView,
  ListDealsForContactRequest,
  ListDealsQuery,
  MoveDealStageDto,
  PipelineDealsQuery,
  PipelineReportQuery,
  PipelineReportView,
  PipelineView,
  ReassignContactReply,
  ReassignContactRequest,
  ReorderStagesDto,
  ResolveDealsReply,
  ResolveDealsRequest,
  StageHistoryView,
  UpdateDealDto,
  UpdatePipelineDto,
} from '../deals';
import { EventView } from '../event-log/event.view';
import { ListEventsQuery } from '../event-log/list-events.query';
import {
  AppendImportRowsRequest,
  CreateImportQuery,
  FailImportRequest,
  ImportDealsBatchReply,
  ImportDealsBatchRequest,
  ImportFormat,
  ImportView,
} from '../imports';
import { acceptsCustomFields, BuiltInCustomFieldsState, CUSTOM_FIELD_OWNERS } from '../schema/built-in-schema';
import { ObjectRecordView, ObjectSchemaView, SchemaView } from '../schema/field-types';
import {
  CreateObjectTypeDto,
  FieldDefinitionDto,
  ListObjectTypesQuery,
  ObjectRecordInputDto,
  UpdateFieldDefinitionDto,
  UpdateObjectRecordDto,
  UpdateObjectTypeDto,
} from '../schema/object-type.dto';
import { RpcServiceName } from '../subjects';
import {
  CreateWebhookDto,
  DeliveryView,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  PingResultView,
  ReplayWebhookDto,
  UpdateWebhookDto,
  WebhookView,
} from '../webhooks';
import {
  QueryFieldsReply,
  QueryFieldsRequest,
  RecordQueryDto,
  RemoteMatchReply,
  RemoteMatchRequest,
  RemoteValuesReply,
  RemoteValuesRequest,
} from '../query/record-query.dto';
import { BatchLimits, BatchWriteDto } from '../batch/batch';
import {
  AddContactCompanyDto,
  AddDealContactDto,
  AssociationTypeView,
  CompanyContactItem,
  ContactCompanyItem,
  ContactCompanyView,
  DealContactItem,
  DealContactView,
  UpdateAssociationDto,
  UpdateAssociationTypeDto,
} from '../associations/associations';
import { ChangeSlice, ChangeSliceRequest, ChangeView, ListChangesQuery, RecordChangesQuery } from '../changes/changes';
import { DuplicatesQuery, DuplicateView, SearchHitView, SearchQuery, SearchSliceReply, SearchSliceRequest } from '../search/search';
import { batchResults, internal, noContent, Operation, page, PageOf, projectedPage, resource, ResourceOf, route } from './operation';

/*
 * Every operation of the system. Each group is a resource as clients see it (the gateway serves a group as
 * one controller, and its keys are the OpenAPI operation ids: `contacts_create`); the request name's first
 * segment says which service answers. See docs/architecture.md, "Adding an operation".
 */

/**
 * `POST /<object>/query` (docs/query.md): a read, sent as POST because a filter tree does not fit a URL;
 * its items are the list view, or `id` and the paths the request names in `fields`.
 */
const queryRoute = <V, Path extends string>(name: string, path: Path, view: abstract new (...args: never[]) => V, many: string) =>
  route({
    name,
    method: 'POST',
    path,
    status: 200,
    summary: `Query ${many}: a filter over any field, sort, fields and keyset paging`,
    access: 'read',
    body: RecordQueryDto,
    reply: projectedPage(view),
    idempotent: true,
  });

/**
 * `POST /<object>/batch` (docs/batch.md): create, update, upsert or delete up to 200 records in one
 * request, each item answered as its single write would be.
 */
const batchRoute = <V, C, Path extends string>(
  name: string,
  path: Path,
  many: string,
  view: abstract new (...args: never[]) => V,
  created?: abstract new (...args: never[]) => C,
) =>
  route({
    name,
    method: 'POST',
    path,
    status: 200,
    summary: `Create, update, upsert or delete up to ${BatchLimits.items} ${many} in one request`,
    access: 'write',
    body: BatchWriteDto,
    reply: batchResults(view, created),
    errors: { 400: 'The batch itself is malformed, or with all_or_none an item failed: details name each failing item as items.<index>.<field>.' },
    via: 'batch',
  });

/**
 * `GET /<object>/:id/changes` (docs/changes.md): one record's change history, oldest first. It answers
 * for a deleted record whose history is kept; 404 only for a record that has neither.
 */
const changesRoute = <Path extends string>(name: string, path: Path, one: string) =>
  route({
    name,
    method: 'GET',
    path,
    summary: `List the changes of ${one}, oldest first: who changed which fields, from what, through which channel`,
    access: 'read',
    query: RecordChangesQuery,
    reply: page(ChangeView),
    errors: { 404: 'No such record, and no history of one (`not_found`).' },
  });

/** The part of GET /changes one service answers: its own entries after an id, oldest first. */
const changeSlice = (service: 'deals') => internal<ChangeSliceRequest, ChangeSlice>({ name: `${service}.changes.slice`, idempotent: true });

/**
 * The four routes of one association type (docs/associations.md): add, list, change and remove the
 * `target`s of an `owner`, which the MCP association tools run.
 */
const associationRoutes = <V, I, B, OwnerPath extends string, Param extends string>(spec: {
  name: string;
  owner: OwnerPath;
  param: Param;
  nouns: { owner: string; target: string; targets: string; field: string };
  body: abstract new (...args: never[]) => B;
  view: abstract new (...args: never[]) => V;
  item: abstract new (...args: never[]) => I;
}) => {
  const { owner, target, targets, field } = spec.nouns;
  const one = `${spec.owner}/${targets}` as const;
  const each = `${spec.owner}/${targets}/:${spec.param}` as `${OwnerPath}/${string}/:${Param}`;
  const notAssociated = { 404: `No such ${owner}, or the ${target} is not associated with it (\`not_found\`).` };
  return {
    add: route({
      name: `${spec.name}.add`,
      method: 'POST',
      path: one,
      summary: `Associate a ${target} with a ${owner}, with an optional role`,
      access: 'write',
      body: spec.body,
      reply: resource(spec.view),
      errors: {
        404: `No such ${owner}, or no ${target} with that ${field} (\`not_found\`, details name the field).`,
        409: `The ${target} is already associated with the ${owner} (\`conflict\`).`,
      },
    }),
    list: route({
      name: `${spec.name}.list`,
      method: 'GET',
      path: one,
      summary: `List a ${owner}'s ${targets} with their roles`,
      access: 'read',
      query: PageQuery,
      reply: page(spec.item),
    }),
    update: route({
      name: `${spec.name}.update`,
      method: 'PATCH',
      path: each,
      summary: `Change a ${target} association's role, or make it primary`,
      access: 'write',
      body: UpdateAssociationDto,
      reply: resource(spec.view),
      errors: notAssociated,
    }),
    remove: route({
      name: `${spec.name}.remove`,
      method: 'DELETE',
      path: each,
      summary: `Remove a ${target} association from a ${owner}`,
      access: 'write',
      reply: noContent,
      errors: notAssociated,
    }),
  };
};

const contactCompanies = associationRoutes({
  name: 'contacts.contact_companies',
  owner: '/contacts/:id',
  param: 'company_id',
  nouns: { owner: 'contact', target: 'company', targets: 'companies', field: 'company_id' },
  body: AddContactCompanyDto,
  view: ContactCompanyView,
  item: ContactCompanyItem,
});

const dealContacts = associationRoutes({
  name: 'deals.deal_contacts',
  owner: '/deals/:id',
  param: 'contact_id',
  nouns: { owner: 'deal', target: 'contact', targets: 'contacts', field: 'contact_id' },
  body: AddDealContactDto,
  view: DealContactView,
  item: DealContactItem,
});

const contacts = {
  create: route({
    name: 'contacts.contacts.create',
    method: 'POST',
    path: '/contacts',
    summary: 'Create a contact',
    access: 'write',
    body: CreateContactDto,
    reply: resource(ContactSummaryView, { warnings: true }),
  }),
  list: route({
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
  query: queryRoute('contacts.contacts.query', '/contacts/query', ContactSummaryView, 'contacts'),
  batch: batchRoute('contacts.contacts.batch', '/contacts/batch', 'contacts', ContactView, ContactSummaryView),
  merge: route({
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
    name: 'contacts.contacts.get',
    method: 'GET',
    path: '/contacts/:id',
    summary: 'Get a contact',
    access: 'read',
    reply: resource(ContactView, { included: true }),
  }),
  update: route({
    name: 'contacts.contacts.update',
    method: 'PATCH',
    path: '/contacts/:id',
    summary: 'Update a contact',
    access: 'write',
    body: UpdateContactDto,
    reply: resource(ContactView, { included: true, warnings: true }),
  }),
  remove: route({ name: 'contacts.contacts.delete', method: 'DELETE', path: '/contacts/:id', summary: 'Delete a contact', access: 'write', reply: noContent }),
  changes: changesRoute('contacts.contacts.changes', '/contacts/:id/changes', 'a contact'),
  deals: route({
    name: 'contacts.contacts.deals',
    method: 'GET',
    path: '/contacts/:id/deals',
    summary: "List every deal a contact is associated with, primary or not, with the association's role",
    access: 'read',
    query: SortablePageQuery,
    reply: page(ContactDealItem),
  }),
  activities: route({
    name: 'contacts.contacts.activities',
    method: 'GET',
    path: '/contacts/:id/activities',
    summary: "List a contact's activities",
    access: 'read',
    query: SortablePageQuery,
    reply: page(ActivitySummaryView),
  }),
  tasks: route({
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

const companies = {
  create: route({
    name: 'contacts.companies.create',
    method: 'POST',
    path: '/companies',
    summary: 'Create a company',
    access: 'write',
    body: CreateCompanyDto,
    reply: resource(CompanyView, { warnings: true }),
  }),
  list: route({
    name: 'contacts.companies.list',
    method: 'GET',
    path: '/companies',
    summary: 'List companies',
    access: 'read',
    query: ListCompaniesQuery,
    reply: page(CompanyView),
  }),
  query: queryRoute('contacts.companies.query', '/companies/query', CompanyView, 'companies'),
  batch: batchRoute('contacts.companies.batch', '/companies/batch', 'companies', CompanyView),
  get: route({ name: 'contacts.companies.get', method: 'GET', path: '/companies/:id', summary: 'Get a company', access: 'read', reply: resource(CompanyView) }),
  update: route({
    name: 'contacts.companies.update',
    method: 'PATCH',
    path: '/companies/:id',
    summary: 'Update a company',
    access: 'write',
    body: UpdateCompanyDto,
    reply: resource(CompanyView, { warnings: true }),
  }),
  remove: route({
    name: 'contacts.companies.delete',
    method: 'DELETE',
    path: '/companies/:id',
    summary: 'Delete a company',
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute('contacts.companies.changes', '/companies/:id/changes', 'a company'),
  contacts: route({
    name: 'contacts.companies.contacts',
    method: 'GET',
    path: '/companies/:id/contacts',
    summary: "List a company's associated contacts with their roles",
    access: 'read',
    query: PageQuery,
    reply: page(CompanyContactItem),
  }),
};

const users = {
  create: route({
    name: 'contacts.users.create',
    method: 'POST',
    path: '/users',
    summary: 'Add a team member',
    access: 'write',
    body: CreateUserDto,
    reply: resource(UserView),
  }),
  list: route({
    name: 'contacts.users.list',
    method: 'GET',
    path: '/users',
    summary: 'List team members',
    access: 'read',
    query: ListUsersQuery,
    reply: page(UserView),
  }),
  query: queryRoute('contacts.users.query', '/users/query', UserView, 'team members'),
  get: route({ name: 'contacts.users.get', method: 'GET', path: '/users/:id', summary: 'Get a team member', access: 'read', reply: resource(UserView) }),
  update: route({
    name: 'contacts.users.update',
    method: 'PATCH',
    path: '/users/:id',
    summary: 'Update a team member',
    access: 'write',
    body: UpdateUserDto,
    reply: resource(UserView),
  }),
  remove: route({ name: 'contacts.users.delete', method: 'DELETE', path: '/users/:id', summary: 'Remove a team member', access: 'write', reply: noContent }),
  changes: changesRoute('contacts.users.changes', '/users/:id/changes', 'a team member'),
};

const imports = {
  /**
   * A custom route: the gateway streams the upload into the job this creates (body: the upload's format),
   * with `importSteps`, so neither side holds the whole file.
   */
  create: route({
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
    name: 'contacts.imports.list',
    method: 'GET',
    path: '/imports',
    summary: 'List imports',
    access: 'read',
    query: SortablePageQuery,
    reply: page(ImportView),
  }),
  get: route({
    name: 'contacts.imports.get',
    method: 'GET',
    path: '/imports/:id',
    summary: 'Get an import: status, progress counts and the first row errors',
    access: 'read',
    reply: resource(ImportView),
  }),
};

/** The steps of a streamed upload after `imports.create`; the gateway calls them, no route reaches them. */
const importSteps = {
  appendRows: internal<AppendImportRowsRequest, void>({ name: 'contacts.imports.append_rows' }),
  start: internal<null, { data: ImportView }>({ name: 'contacts.imports.start' }),
  fail: internal<FailImportRequest, { data: ImportView }>({ name: 'contacts.imports.fail' }),
};

const workItemRoutes = <V, C, U, L>(
  resourceName: 'activities' | 'tasks',
  [one, many]: [string, string],
  view: abstract new (...args: never[]) => V,
  classes: { create: abstract new (...args: never[]) => C; update: abstract new (...args: never[]) => U; list: abstract new (...args: never[]) => L },
  createSummary: string,
) => ({
  create: route({
    name: `contacts.${resourceName}.create`,
    method: 'POST',
    path: `/${resourceName}`,
    summary: createSummary,
    access: 'write',
    body: classes.create,
    reply: resource(view, { warnings: true }),
  }),
  list: route({
    name: `contacts.${resourceName}.list`,
    method: 'GET',
    path: `/${resourceName}`,
    summary: `List ${many}`,
    access: 'read',
    query: classes.list,
    reply: page(view),
  }),
  query: queryRoute(`contacts.${resourceName}.query`, `/${resourceName}/query`, view, many),
  batch: batchRoute(`contacts.${resourceName}.batch`, `/${resourceName}/batch`, many, view),
  get: route({
    name: `contacts.${resourceName}.get`,
    method: 'GET',
    path: `/${resourceName}/:id` as const,
    summary: `Get ${one}`,
    access: 'read',
    reply: resource(view),
  }),
  update: route({
    name: `contacts.${resourceName}.update`,
    method: 'PATCH',
    path: `/${resourceName}/:id` as const,
    summary: `Update ${one}`,
    access: 'write',
    body: classes.update,
    reply: resource(view, { warnings: true }),
  }),
  remove: route({
    name: `contacts.${resourceName}.delete`,
    method: 'DELETE',
    path: `/${resourceName}/:id` as const,
    summary: `Delete ${one}`,
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute(`contacts.${resourceName}.changes`, `/${resourceName}/:id/changes` as const, one),
});

const activities = workItemRoutes(
  'activities',
  ['an activity', 'activities'],
  ActivityView,
  { create: CreateActivityDto, update: UpdateActivityDto, list: ListActivitiesQuery },
  'Log an activity',
);
const tasks = workItemRoutes('tasks', ['a task', 'tasks'], TaskView, { create: CreateTaskDto, update: UpdateTaskDto, list: ListTasksQuery }, 'Create a task');

const deals = {
  create: route({
    name: 'deals.deals.create',
    method: 'POST',
    path: '/deals',
    summary: 'Create a deal',
    access: 'write',
    body: CreateDealDto,
    reply: resource(DealView, { warnings: true }),
  }),
  list: route({
    name: 'deals.deals.list',
    method: 'GET',
    path: '/deals',
    summary: 'List deals',
    access: 'read',
    query: ListDealsQuery,
    reply: page(DealView),
  }),
  query: queryRoute('deals.deals.query', '/deals/query', DealView, 'deals'),
  batch: batchRoute('deals.deals.batch', '/deals/batch', 'deals', FullDealView, DealView),
  get: route({
    name: 'deals.deals.get',
    method: 'GET',
    path: '/deals/:id',
    summary: 'Get a deal',
    access: 'read',
    reply: resource(FullDealView, { included: true }),
  }),
  update: route({
    name: 'deals.deals.update',
    method: 'PATCH',
    path: '/deals/:id',
    summary: 'Update a deal',
    access: 'write',
    body: UpdateDealDto,
    reply: resource(FullDealView, { included: true, warnings: true }),
  }),
  remove: route({ name: 'deals.deals.delete', method: 'DELETE', path: '/deals/:id', summary: 'Delete a deal', access: 'write', reply: noContent }),
  changes: changesRoute('deals.deals.changes', '/deals/:id/changes', 'a deal'),
  moveStage: route({
    name: 'deals.deals.move_stage',
    method: 'POST',
    path: '/deals/:id/stage',
    status: 200,
    summary: 'Move a deal to another stage',
    access: 'write',
    body: MoveDealStageDto,
    reply: resource(FullDealView, { included: true }),
    mcp: {
      tool: 'move_deal_stage',
      title: 'Move a deal to another stage',
      description: 'Moves a deal to a stage of its pipeline, recording stage history. Emits deal.stage_changed, and deal.won or deal.lost for closing stages.',
    },
  }),
  history: route({
    name: 'deals.deals.history',
    method: 'GET',
    path: '/deals/:id/history',
    summary: "List a deal's stage changes, oldest first",
    access: 'read',
    query: SortablePageQuery,
    reply: page(StageHistoryView),
    mcp: { tool: 'get_deal_history', title: 'Stage history of a deal', description: 'Every stage change of a deal, oldest first, with cursor pagination.' },
  }),
  addContact: dealContacts.add,
  contacts: dealContacts.list,
  updateContact: dealContacts.update,
  removeContact: dealContacts.remove,
  /** Activities and tasks are kept by the contacts service. */
  activities: route({
    name: 'contacts.deals.activities',
    method: 'GET',
    path: '/deals/:id/activities',
    summary: "List a deal's activities",
    access: 'read',
    query: SortablePageQuery,
    reply: page(ActivitySummaryView),
  }),
  tasks: route({
    name: 'contacts.deals.tasks',
    method: 'GET',
    path: '/deals/:id/tasks',
    summary: "List a deal's tasks",
    access: 'read',
    query: SortablePageQuery,
    reply: page(TaskSummaryView),
  }),
};

const pipelines = {
  create: route({
    name: 'deals.pipelines.create',
    method: 'POST',
    path: '/pipelines',
    summary: 'Create a pipeline with its stages',
    access: 'write',
    body: CreatePipelineDto,
    reply: resource(PipelineView, { warnings: true }),
  }),
  list: route({
    name: 'deals.pipelines.list',
    method: 'GET',
    path: '/pipelines',
    summary: 'List pipelines',
    access: 'read',
    query: SortablePageQuery,
    reply: page(PipelineView),
    mcp: { tool: 'list_pipelines', title: 'List pipelines', description: 'Pipelines with their stages in order.' },
  }),
  get: route({ name: 'deals.pipelines.get', method: 'GET', path: '/pipelines/:id', summary: 'Get a pipeline', access: 'read', reply: resource(PipelineView) }),
  update: route({
    name: 'deals.pipelines.update',
    method: 'PATCH',
    path: '/pipelines/:id',
    summary: 'Update a pipeline',
    access: 'write',
    body: UpdatePipelineDto,
    reply: resource(PipelineView, { warnings: true }),
  }),
  remove: route({
    name: 'deals.pipelines.delete',
    method: 'DELETE',
    path: '/pipelines/:id',
    summary: 'Delete a pipeline',
    access: 'write',
    query: DeleteWithMoveQuery,
    reply: noContent,
  }),
  changes: changesRoute('deals.pipelines.changes', '/pipelines/:id/changes', 'a pipeline'),
  deals: route({
    name: 'deals.pipelines.deals',
    method: 'GET',
    path: '/pipelines/:id/deals',
    summary: "List a pipeline's deals",
    access: 'read',
    query: PipelineDealsQuery,
    reply: page(DealView),
  }),
  report: route({
    name: 'deals.pipelines.report',
    method: 'GET',
    path: '/pipelines/:pipeline_id/report',
    summary: 'Report on a pipeline: open value per stage, conversion, time in stage, wins and losses, forecast',
    access: 'read',
    query: PipelineReportQuery,
    reply: resource(PipelineReportView),
    mcp: {
      tool: 'pipeline_report',
      title: 'Pipeline report',
      description:
        'Per stage: open deals and weighted value, entries, conversion and days in stage; won, lost, win rate, cycle days and the forecast by month. from/to: RFC 3339, default the last 90 days; currency is needed when deals mix currencies.',
    },
  }),
  addStage: route({
    name: 'deals.pipelines.add_stage',
    method: 'POST',
    path: '/pipelines/:id/stages',
    summary: 'Add a stage',
    access: 'write',
    body: StageInputDto,
    reply: resource(PipelineView),
  }),
  reorderStages: route({
    name: 'deals.pipelines.reorder_stages',
    method: 'PUT',
    path: '/pipelines/:id/stages',
    summary: 'Reorder the stages',
    access: 'write',
    body: ReorderStagesDto,
    reply: resource(PipelineView),
  }),
  deleteStage: route({
    name: 'deals.pipelines.delete_stage',
    method: 'DELETE',
    path: '/pipelines/:id/stages/:stage_id',
    summary: 'Delete a stage, moving its deals',
    access: 'write',
    query: DeleteWithMoveQuery,
    reply: noContent,
  }),
};

const events = {
  list: route({
    name: 'events.events.list',
    method: 'GET',
    path: '/events',
    summary: 'Read the event log in order',
    access: 'read',
    query: ListEventsQuery,
    reply: page(EventView),
    mcp: {
      tool: 'list_events',
      title: 'Read the event log',
      description:
        'The ordered event log with cursor pagination, as GET /events: pass next_cursor back to continue from where the last page ended. type filters by one type, a comma-separated list or a prefix (contact.*).',
    },
  }),
};

/**
 * The change log across every object. The contacts service answers it: it keeps most objects, and asks
 * the deals service for its slice, merging both in id order (oldest first) so one cursor walks them all.
 */
const changes = {
  list: route({
    name: 'contacts.changes.list',
    method: 'GET',
    path: '/changes',
    summary: 'Read the change history across every object, oldest first, filtered by object, record, actor, channel or time',
    access: 'read',
    query: ListChangesQuery,
    reply: page(ChangeView),
    mcp: {
      tool: 'list_changes',
      title: 'Who changed what',
      description:
        'The change history across every object, oldest first, as GET /changes: each entry names the record, the fields changed with their previous and current values, the actor (API key, user or system), the channel (api, batch, import, mcp, capture, merge, system) and the request. Filter by object, record_id, actor_id, via, created_after and created_before; pass next_cursor back to continue.',
    },
  }),
  /** The deals service's part of the log: deals and pipelines. */
  dealsSlice: changeSlice('deals'),
};

const webhooks = {
  create: route({
    name: 'webhooks.webhooks.create',
    method: 'POST',
    path: '/webhooks',
    summary: 'Subscribe a URL to events',
    access: 'write',
    body: CreateWebhookDto,
    reply: resource(WebhookView, { secret: true }),
  }),
  list: route({
    name: 'webhooks.webhooks.list',
    method: 'GET',
    path: '/webhooks',
    summary: 'List webhook subscriptions',
    access: 'read',
    query: ListWebhooksQuery,
    reply: page(WebhookView),
  }),
  get: route({
    name: 'webhooks.webhooks.get',
    method: 'GET',
    path: '/webhooks/:id',
    summary: 'Get a webhook subscription',
    access: 'read',
    reply: resource(WebhookView),
  }),
  update: route({
    name: 'webhooks.webhooks.update',
    method: 'PATCH',
    path: '/webhooks/:id',
    summary: 'Update a webhook subscription',
    access: 'write',
    body: UpdateWebhookDto,
    reply: resource(WebhookView),
  }),
  remove: route({
    name: 'webhooks.webhooks.delete',
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Delete a webhook subscription',
    access: 'write',
    reply: noContent,
  }),
  deliveries: route({
    name: 'webhooks.webhooks.deliveries',
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: 'List delivery attempts',
    access: 'read',
    query: ListDeliveriesQuery,
    reply: page(DeliveryView),
  }),
  ping: route({
    name: 'webhooks.webhooks.ping',
    method: 'POST',
    path: '/webhooks/:id/ping',
    status: 200,
    summary: 'Send a signed test request now',
    access: 'write',
    reply: resource(PingResultView),
    errors: { 502: 'The endpoint answered non-2xx, timed out or could not be reached (`bad_gateway`).' },
  }),
  replay: route({
    name: 'webhooks.webhooks.replay',
    method: 'POST',
    path: '/webhooks/:id/replay',
    status: 200,
    summary: 'Deliver one past event again',
    access: 'write',
    body: ReplayWebhookDto,
    reply: resource(WebhookView),
  }),
};

const schema = {
  get: route({
    name: 'contacts.schema.get',
    method: 'GET',
    path: '/schema',
    summary: 'Describe every object and its fields',
    access: 'read',
    reply: resource(SchemaView),
    mcp: {
      tool: 'describe_schema',
      title: 'Describe the CRM schema',
      description:
        'Every built-in and custom object with its field definitions (types, options, required fields, enforcement level), and the association types with their role labels.',
    },
  }),
  updateAssociation: route({
    name: 'contacts.schema.update_association',
    method: 'PATCH',
    path: '/schema/associations/:type',
    summary: 'Set the role labels of an association type',
    access: 'write',
    body: UpdateAssociationTypeDto,
    reply: resource(AssociationTypeView),
    errors: { 404: 'No association type of that name (`not_found`).' },
    routeBy: ({ type }) => (type === 'deal_contacts' ? dealsSchema.updateAssociation : undefined),
    mcp: {
      tool: 'set_association_labels',
      title: 'Set the roles an association may have',
      description: 'Replaces the labels of deal_contacts or contact_companies; roles written afterwards must be one of them. An empty list allows any role.',
    },
  }),
};

const capture = {
  capture: route({
    name: 'contacts.capture.create',
    method: 'POST',
    path: '/capture',
    status: 202,
    summary: 'Capture a contact (create or enrich by email)',
    access: 'capture',
    body: CaptureContactDto,
    reply: resource(CaptureView),
    via: 'capture',
  }),
};

/**
 * Custom fields of the deals service's built-in objects (deals, pipelines): `/objects/deals…` is answered
 * there, with the same payloads as the contacts service's object types; `describe` feeds GET /schema.
 */
const dealsSchema = {
  get: internal<null, { data: ObjectSchemaView }>({ name: 'deals.schema.get', idempotent: true }),
  update: internal<UpdateObjectTypeDto, { data: ObjectSchemaView }>({ name: 'deals.schema.update', body: UpdateObjectTypeDto, idempotent: true }),
  addField: internal<FieldDefinitionDto, { data: ObjectSchemaView }>({ name: 'deals.schema.add_field', body: FieldDefinitionDto }),
  updateField: internal<UpdateFieldDefinitionDto, { data: ObjectSchemaView }>({
    name: 'deals.schema.update_field',
    body: UpdateFieldDefinitionDto,
    idempotent: true,
  }),
  removeField: internal<null, { data: ObjectSchemaView }>({ name: 'deals.schema.remove_field', idempotent: true }),
  describe: internal<Record<string, never>, { objects: Record<string, BuiltInCustomFieldsState>; associations: AssociationTypeView[] }>({
    name: 'deals.schema.describe',
    idempotent: true,
  }),
  updateAssociation: internal<UpdateAssociationTypeDto, { data: AssociationTypeView }>({
    name: 'deals.schema.update_association',
    body: UpdateAssociationTypeDto,
    idempotent: true,
  }),
};

/** `/objects/:slug…` schema routes go to the service that keeps the object's fields. */
const keptByDeals = (slug: string) => acceptsCustomFields(slug) && CUSTOM_FIELD_OWNERS[slug] === 'deals';

const objects = {
  create: route({
    name: 'contacts.objects.create',
    method: 'POST',
    path: '/objects',
    summary: 'Define a custom object',
    access: 'write',
    body: CreateObjectTypeDto,
    reply: resource(ObjectSchemaView),
  }),
  list: route({
    name: 'contacts.objects.list',
    method: 'GET',
    path: '/objects',
    summary: 'List objects',
    access: 'read',
    query: ListObjectTypesQuery,
    reply: page(ObjectSchemaView),
  }),
  get: route({
    name: 'contacts.objects.get',
    method: 'GET',
    path: '/objects/:slug',
    summary: 'Describe one object',
    access: 'read',
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.get : undefined),
  }),
  update: route({
    name: 'contacts.objects.update',
    method: 'PATCH',
    path: '/objects/:slug',
    summary: 'Rename, archive or set the enforcement level of an object',
    access: 'write',
    body: UpdateObjectTypeDto,
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.update : undefined),
  }),
  addField: route({
    name: 'contacts.objects.add_field',
    method: 'POST',
    path: '/objects/:slug/fields',
    summary: 'Add a field',
    access: 'write',
    body: FieldDefinitionDto,
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.addField : undefined),
  }),
  updateField: route({
    name: 'contacts.objects.update_field',
    method: 'PATCH',
    path: '/objects/:slug/fields/:name',
    summary: 'Rename a field or change its label (stored values move to the new name)',
    access: 'write',
    body: UpdateFieldDefinitionDto,
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.updateField : undefined),
  }),
  removeField: route({
    name: 'contacts.objects.remove_field',
    method: 'DELETE',
    path: '/objects/:slug/fields/:name',
    status: 200,
    summary: 'Remove a field and every value stored under it',
    access: 'write',
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.removeField : undefined),
  }),
  createRecord: route({
    name: 'contacts.records.create',
    method: 'POST',
    path: '/objects/:slug/records',
    summary: 'Create a record',
    access: 'write',
    body: ObjectRecordInputDto,
    reply: resource(ObjectRecordView, { warnings: true }),
  }),
  listRecords: route({
    name: 'contacts.records.list',
    method: 'GET',
    path: '/objects/:slug/records',
    summary: 'List records',
    access: 'read',
    query: SortablePageQuery,
    reply: page(ObjectRecordView),
  }),
  getRecord: route({
    name: 'contacts.records.get',
    method: 'GET',
    path: '/objects/:slug/records/:id',
    summary: 'Get a record',
    access: 'read',
    reply: resource(ObjectRecordView),
  }),
  updateRecord: route({
    name: 'contacts.records.update',
    method: 'PATCH',
    path: '/objects/:slug/records/:id',
    summary: 'Update a record',
    access: 'write',
    body: UpdateObjectRecordDto,
    reply: resource(ObjectRecordView, { warnings: true }),
  }),
  queryRecords: queryRoute('contacts.records.query', '/objects/:slug/records/query', ObjectRecordView, 'records of a custom object'),
  batchRecords: batchRoute('contacts.records.batch', '/objects/:slug/records/batch', 'records of a custom object', ObjectRecordView),
  removeRecord: route({
    name: 'contacts.records.delete',
    method: 'DELETE',
    path: '/objects/:slug/records/:id',
    summary: 'Delete a record',
    access: 'write',
    reply: noContent,
  }),
  recordChanges: changesRoute('contacts.records.changes', '/objects/:slug/records/:id/changes', 'a custom object record'),
};

/**
 * One search across objects (docs/search.md). The contacts service answers it: it keeps most objects, and
 * asks the deals service for its ranked slice, merging both in one order so one cursor walks them all.
 */
const search = {
  search: route({
    name: 'contacts.search.search',
    method: 'GET',
    path: '/search',
    summary: 'Search every object by what a person remembers: words, word starts, typos, emails and their parts, phone numbers, ids',
    access: 'read',
    query: SearchQuery,
    reply: page(SearchHitView),
    mcp: {
      tool: 'search',
      title: 'Find records by words',
      description:
        'Turns words into ids across contacts, companies, deals, users, activities, tasks and searchable custom fields, as GET /search: accents and case ignored, word starts, typos in words of 5+ letters, emails or their parts, phones in any format, exact ids. Best first; pass next_cursor back to continue.',
    },
  }),
  /** The deals service's part of the ranking. */
  dealsSlice: internal<SearchSliceRequest, SearchSliceReply>({ name: 'deals.search.slice', idempotent: true }),
};

/** Possible duplicates of a contact or company, stored or drafted, with the rules that matched (docs/search.md). */
const duplicateRoute = <Path extends string, B>(name: string, method: 'GET' | 'POST', path: Path, many: string, body?: abstract new (...args: never[]) => B) =>
  route({
    name,
    method,
    path,
    status: 200,
    summary:
      method === 'GET'
        ? `List likely duplicates of one of the ${many}, best first, with the rules that matched`
        : `List ${many} a draft would duplicate, best first, with the rules that matched`,
    access: 'read',
    query: DuplicatesQuery,
    ...(body ? { body } : {}),
    reply: page(DuplicateView),
    idempotent: true,
    ...(method === 'GET' ? { errors: { 404: 'No such record (`not_found`).' } } : {}),
  });

const duplicates = {
  contact: duplicateRoute('contacts.duplicates.contact', 'GET', '/contacts/:id/duplicates', 'contacts'),
  contactDraft: duplicateRoute('contacts.duplicates.contact_draft', 'POST', '/contacts/duplicates', 'contacts', UpdateContactDto),
  company: duplicateRoute('contacts.duplicates.company', 'GET', '/companies/:id/duplicates', 'companies'),
  companyDraft: duplicateRoute('contacts.duplicates.company_draft', 'POST', '/companies/duplicates', 'companies', UpdateCompanyDto),
};

/** Requests between services; no HTTP route reaches them. */
const contactsInternal = {
  /** Which of the given contact, company and user ids exist, with their display names. Unknown ids are left out. */
  resolve: internal<ResolveContactsDto, ResolveContactsReply>({ name: 'contacts.internal.resolve', body: ResolveContactsDto, idempotent: true }),
  /** Conditions of another service's query on contacts, companies or users (`contact.email` on deals), answered with ids. */
  queryMatch: internal<RemoteMatchRequest, RemoteMatchReply>({ name: 'contacts.internal.query_match', idempotent: true }),
  /** Paths of contacts, companies or users another service's query returns (`fields: ["contact.email"]`). */
  queryValues: internal<RemoteValuesRequest, RemoteValuesReply>({ name: 'contacts.internal.query_values', idempotent: true }),
  /** The paths a query over contacts, companies, users, activities, tasks or a custom object may name (MCP's describe_object). */
  queryFields: internal<QueryFieldsRequest, QueryFieldsReply>({ name: 'contacts.internal.query_fields', idempotent: true }),
};

const dealsInternal = {
  /** Deals of one contact, for GET /contacts/:id/deals. */
  listForContact: internal<ListDealsForContactRequest, PageOf<ContactDealItem>>({
    name: 'deals.internal.list_for_contact',
    body: ListDealsForContactRequest,
    idempotent: true,
  }),
  /** Moves every deal of one contact to another (contact merge). */
  reassignContact: internal<ReassignContactRequest, ReassignContactReply>({
    name: 'deals.internal.reassign_contact',
    body: ReassignContactRequest,
    idempotent: true,
  }),
  /** Which of the given deal ids exist, with their names. */
  resolve: internal<ResolveDealsRequest, ResolveDealsReply>({ name: 'deals.internal.resolve', body: ResolveDealsRequest, idempotent: true }),
  /** Applies a batch of an import's deal rows, once per (import_id, first_seq). */
  importBatch: internal<ImportDealsBatchRequest, ImportDealsBatchReply>({ name: 'deals.internal.import_batch', idempotent: true }),
  /** Conditions of another service's query on deals (`deal.value` on tasks), answered with ids. */
  queryMatch: internal<RemoteMatchRequest, RemoteMatchReply>({ name: 'deals.internal.query_match', idempotent: true }),
  /** Paths of deals another service's query returns (`fields: ["deal.name"]`). */
  queryValues: internal<RemoteValuesRequest, RemoteValuesReply>({ name: 'deals.internal.query_values', idempotent: true }),
  /** The paths a query over deals may name (MCP's describe_object). */
  queryFields: internal<QueryFieldsRequest, QueryFieldsReply>({ name: 'deals.internal.query_fields', idempotent: true }),
};

/** `<service>.health`: answered by a service's RPC server itself, so "up" means a replica is handling requests. */
export function healthCheck(service: RpcServiceName) {
  return internal<Record<string, never>, { status: 'up'; service: RpcServiceName; outbox?: { pending: number; oldest_age_seconds: number } }>({
    name: `${service}.health`,
    idempotent: true,
  });
}

export const Ops = {
  contacts,
  companies,
  users,
  imports,
  importSteps,
  activities,
  tasks,
  deals,
  pipelines,
  events,
  changes,
  webhooks,
  schema,
  capture,
  objects,
  dealsSchema,
  contactsInternal,
  dealsInternal,
  search,
  duplicates,
};
