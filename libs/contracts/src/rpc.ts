import type { ErrorBody } from '@crm/common';
import { acceptsCustomFields, CUSTOM_FIELD_OWNERS } from './schema/built-in-schema';

export const API_SCOPES = ['read', 'read-write', 'capture-only'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** Who is calling, carried from the gateway to the service that does the work. */
export interface RequestContext {
  request_id: string;
  key_id?: string;
  scope?: ApiScope;
  /** The team member the key belongs to, when it has one. */
  user_id?: string;
  /**
   * Set when the client sent an Idempotency-Key: a digest of the API key id and the key, under which the
   * service records the request's outcome so a retry after a lost reply gets that outcome back.
   */
  idempotency_ref?: string;
}

/** What the gateway sends for one HTTP request: path parameters, query, body, caller. */
export interface RpcRequest<B = unknown, Q = Record<string, unknown>, P = Record<string, string>> {
  ctx: RequestContext;
  params: P;
  query: Q;
  body: B;
}

/** `body` is the HTTP response body as the client will see it; the gateway picks the status. */
export type RpcReply = { ok: true; body?: unknown } | { ok: false; error: ErrorBody };

/** Request names: `<service>.<resource>.<action>`. Each route of the HTTP API maps to one. */
export const ContactsRpc = {
  Create: 'contacts.contacts.create',
  List: 'contacts.contacts.list',
  Get: 'contacts.contacts.get',
  Update: 'contacts.contacts.update',
  Delete: 'contacts.contacts.delete',
  Merge: 'contacts.contacts.merge',
  ListDeals: 'contacts.contacts.deals',
  ListActivities: 'contacts.contacts.activities',
  ListTasks: 'contacts.contacts.tasks',
  DealActivities: 'contacts.deals.activities',
  DealTasks: 'contacts.deals.tasks',
  Schema: 'contacts.schema.get',
  Capture: 'contacts.capture.create',
} as const;

export const PipelinesRpc = {
  Create: 'deals.pipelines.create',
  List: 'deals.pipelines.list',
  Get: 'deals.pipelines.get',
  Update: 'deals.pipelines.update',
  Delete: 'deals.pipelines.delete',
  ListDeals: 'deals.pipelines.deals',
  AddStage: 'deals.pipelines.add_stage',
  ReorderStages: 'deals.pipelines.reorder_stages',
  DeleteStage: 'deals.pipelines.delete_stage',
} as const;

export const DealsRpc = {
  Create: 'deals.deals.create',
  List: 'deals.deals.list',
  Get: 'deals.deals.get',
  Update: 'deals.deals.update',
  Delete: 'deals.deals.delete',
  MoveStage: 'deals.deals.move_stage',
  History: 'deals.deals.history',
} as const;

export const EventsRpc = {
  List: 'events.events.list',
} as const;

export const WebhooksRpc = {
  Create: 'webhooks.webhooks.create',
  List: 'webhooks.webhooks.list',
  Get: 'webhooks.webhooks.get',
  Update: 'webhooks.webhooks.update',
  Delete: 'webhooks.webhooks.delete',
  Deliveries: 'webhooks.webhooks.deliveries',
  Ping: 'webhooks.webhooks.ping',
  Replay: 'webhooks.webhooks.replay',
} as const;

export const CompaniesRpc = {
  Create: 'contacts.companies.create',
  List: 'contacts.companies.list',
  Get: 'contacts.companies.get',
  Update: 'contacts.companies.update',
  Delete: 'contacts.companies.delete',
} as const;

export const ActivitiesRpc = {
  Create: 'contacts.activities.create',
  List: 'contacts.activities.list',
  Get: 'contacts.activities.get',
  Update: 'contacts.activities.update',
  Delete: 'contacts.activities.delete',
} as const;

export const TasksRpc = {
  Create: 'contacts.tasks.create',
  List: 'contacts.tasks.list',
  Get: 'contacts.tasks.get',
  Update: 'contacts.tasks.update',
  Delete: 'contacts.tasks.delete',
} as const;

/** Team members; the contacts service owns them (see docs/users.md). */
export const UsersRpc = {
  Create: 'contacts.users.create',
  List: 'contacts.users.list',
  Get: 'contacts.users.get',
  Update: 'contacts.users.update',
  Delete: 'contacts.users.delete',
} as const;

/** Custom object types, and custom fields of built-in objects (`/objects/:slug` where slug is e.g. contacts). */
export const ObjectTypesRpc = {
  Create: 'contacts.objects.create',
  List: 'contacts.objects.list',
  Get: 'contacts.objects.get',
  Update: 'contacts.objects.update',
  AddField: 'contacts.objects.add_field',
  UpdateField: 'contacts.objects.update_field',
  RemoveField: 'contacts.objects.remove_field',
} as const;

/**
 * Custom fields of the deals service's built-in objects (deals, pipelines): `/objects/deals...` is routed
 * here, and the contacts service asks Describe for GET /schema. Same payloads as ObjectTypesRpc.
 */
export const DealsSchemaRpc = {
  Get: 'deals.schema.get',
  Update: 'deals.schema.update',
  AddField: 'deals.schema.add_field',
  UpdateField: 'deals.schema.update_field',
  RemoveField: 'deals.schema.remove_field',
  /** `{objects: {[slug]: BuiltInCustomFieldsState}}` for every object whose custom fields deals keeps. */
  Describe: 'deals.schema.describe',
} as const;

/** The schema operations of `/objects/:slug` go to the service that keeps the object's fields. */
export function schemaRpcOf(slug: string): Record<'Get' | 'Update' | 'AddField' | 'UpdateField' | 'RemoveField', string> {
  return acceptsCustomFields(slug) && CUSTOM_FIELD_OWNERS[slug] === 'deals' ? DealsSchemaRpc : ObjectTypesRpc;
}

/**
 * Bulk imports (`/imports`), kept by the contacts service: the gateway streams the upload into a job in
 * chunks of rows (Create, AppendRows, then Start, or Fail if the upload broke), and the service applies
 * them in batches.
 */
export const ImportsRpc = {
  Create: 'contacts.imports.create',
  AppendRows: 'contacts.imports.append_rows',
  Start: 'contacts.imports.start',
  Fail: 'contacts.imports.fail',
  Get: 'contacts.imports.get',
  List: 'contacts.imports.list',
} as const;

/** Records of custom objects, `/objects/:slug/records`. */
export const ObjectRecordsRpc = {
  Create: 'contacts.records.create',
  List: 'contacts.records.list',
  Get: 'contacts.records.get',
  Update: 'contacts.records.update',
  Delete: 'contacts.records.delete',
} as const;

/**
 * Service-to-service requests that have no HTTP route. Payload types live beside each service's
 * contracts (libs/contracts/src/<service>/).
 */
export const ContactsInternalRpc = {
  /** Which of the given contact, company and user ids exist, with their display names. */
  Resolve: 'contacts.internal.resolve',
} as const;

export const DealsInternalRpc = {
  /** Deals of one contact, for GET /contacts/:id/deals. */
  ListForContact: 'deals.internal.list_for_contact',
  /** Moves every deal of one contact to another (contact merge); idempotent. */
  ReassignContact: 'deals.internal.reassign_contact',
  /** Which of the given deal ids exist, with their names. */
  Resolve: 'deals.internal.resolve',
  /** Applies a batch of an import's deal rows, once per (import_id, first_seq); see ImportDealsBatchRequest. */
  ImportBatch: 'deals.internal.import_batch',
} as const;

/** A service-to-service request: the caller's context and a body, no path or query. */
export function internalRequest<B>(ctx: RequestContext, body: B): RpcRequest<B> {
  // The client's Idempotency-Key names the client's request, not the calls a service makes to do it.
  const { idempotency_ref: _ref, ...caller } = ctx;
  return { ctx: caller, params: {}, query: {}, body };
}
