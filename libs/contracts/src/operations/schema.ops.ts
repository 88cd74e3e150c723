import { SortablePageQuery } from '../paging';
import { hasCapability, keptBy } from '../objects/registry';
import { BuiltInCustomFieldsState } from '../schema/built-in-schema';
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
import { AssociationTypeView, UpdateAssociationTypeDto } from '../associations/associations';
import { internal, noContent, page, resource, route } from './operation';
import { batchRoute, changesRoute, queryRoute } from './shared';

export const schema = {
  get: route({
    service: 'contacts',
    name: 'contacts.schema.get',
    method: 'GET',
    path: '/schema',
    summary: 'Describe every object and its fields',
    access: 'read',
    reply: resource(SchemaView),
  }),
  updateAssociation: route({
    service: 'contacts',
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

/**
 * Custom fields of the deals service's built-in objects (deals, pipelines): `/objects/deals…` is answered
 * there, with the same payloads as the contacts service's object types; `describe` feeds GET /schema.
 */
export const dealsSchema = {
  get: internal<null, { data: ObjectSchemaView }>({ service: 'deals', name: 'deals.schema.get', idempotent: true }),
  update: internal<UpdateObjectTypeDto, { data: ObjectSchemaView }>({
    service: 'deals',
    name: 'deals.schema.update',
    body: UpdateObjectTypeDto,
    idempotent: true,
  }),
  addField: internal<FieldDefinitionDto, { data: ObjectSchemaView }>({ service: 'deals', name: 'deals.schema.add_field', body: FieldDefinitionDto }),
  updateField: internal<UpdateFieldDefinitionDto, { data: ObjectSchemaView }>({
    service: 'deals',
    name: 'deals.schema.update_field',
    body: UpdateFieldDefinitionDto,
    idempotent: true,
  }),
  removeField: internal<null, { data: ObjectSchemaView }>({ service: 'deals', name: 'deals.schema.remove_field', idempotent: true }),
  describe: internal<Record<string, never>, { objects: Record<string, BuiltInCustomFieldsState>; associations: AssociationTypeView[] }>({
    service: 'deals',
    name: 'deals.schema.describe',
    idempotent: true,
  }),
  updateAssociation: internal<UpdateAssociationTypeDto, { data: AssociationTypeView }>({
    service: 'deals',
    name: 'deals.schema.update_association',
    body: UpdateAssociationTypeDto,
    idempotent: true,
  }),
};

/** `/objects/:slug…` schema routes go to the service that keeps the object's fields. */
const keptByDeals = (slug: string) => hasCapability(slug, 'customFields') && keptBy(slug, 'deals');

export const objects = {
  create: route({
    service: 'contacts',
    name: 'contacts.objects.create',
    method: 'POST',
    path: '/objects',
    summary: 'Define a custom object',
    access: 'write',
    body: CreateObjectTypeDto,
    reply: resource(ObjectSchemaView),
  }),
  list: route({
    service: 'contacts',
    name: 'contacts.objects.list',
    method: 'GET',
    path: '/objects',
    summary: 'List objects',
    access: 'read',
    query: ListObjectTypesQuery,
    reply: page(ObjectSchemaView),
  }),
  get: route({
    service: 'contacts',
    name: 'contacts.objects.get',
    method: 'GET',
    path: '/objects/:slug',
    summary: 'Describe one object',
    access: 'read',
    reply: resource(ObjectSchemaView),
    routeBy: ({ slug }) => (keptByDeals(slug) ? dealsSchema.get : undefined),
  }),
  update: route({
    service: 'contacts',
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
    service: 'contacts',
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
    service: 'contacts',
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
    service: 'contacts',
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
    service: 'contacts',
    name: 'contacts.records.create',
    method: 'POST',
    path: '/objects/:slug/records',
    summary: 'Create a record',
    access: 'write',
    body: ObjectRecordInputDto,
    reply: resource(ObjectRecordView, { warnings: true }),
  }),
  listRecords: route({
    service: 'contacts',
    name: 'contacts.records.list',
    method: 'GET',
    path: '/objects/:slug/records',
    summary: 'List records',
    access: 'read',
    query: SortablePageQuery,
    reply: page(ObjectRecordView),
  }),
  getRecord: route({
    service: 'contacts',
    name: 'contacts.records.get',
    method: 'GET',
    path: '/objects/:slug/records/:id',
    summary: 'Get a record',
    access: 'read',
    reply: resource(ObjectRecordView),
  }),
  updateRecord: route({
    service: 'contacts',
    name: 'contacts.records.update',
    method: 'PATCH',
    path: '/objects/:slug/records/:id',
    summary: 'Update a record',
    access: 'write',
    body: UpdateObjectRecordDto,
    reply: resource(ObjectRecordView, { warnings: true }),
  }),
  queryRecords: queryRoute('contacts', 'contacts.records.query', '/objects/:slug/records/query', ObjectRecordView, 'records of a custom object'),
  batchRecords: batchRoute('contacts', 'contacts.records.batch', '/objects/:slug/records/batch', 'records of a custom object', ObjectRecordView),
  removeRecord: route({
    service: 'contacts',
    name: 'contacts.records.delete',
    method: 'DELETE',
    path: '/objects/:slug/records/:id',
    summary: 'Delete a record',
    access: 'write',
    reply: noContent,
  }),
  recordChanges: changesRoute('contacts', 'contacts.records.changes', '/objects/:slug/records/:id/changes', 'a custom object record'),
};
