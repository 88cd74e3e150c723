import { CaptureContactDto, CaptureView } from '../contacts';
import { EventView } from '../event-log/event.view';
import { EventQueryDto, ListEventsQuery } from '../event-log/list-events.query';
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
import { ChangeView, ListChangesQuery } from '../changes/changes';
import { CreateExportDto, ExportView, ReadExportFileReply, ReadExportFileRequest } from '../exports/exports';
import { internal, noContent, page, resource, route } from './operation';
import { changeSlice } from './shared';

const CURSOR_EXPIRED = 'The cursor points before events the log no longer keeps (EVENTS_RETENTION_DAYS); read again without a cursor (`cursor_expired`).';

export const events = {
  list: route({
    service: 'events',
    name: 'events.events.list',
    method: 'GET',
    path: '/events',
    summary: 'Read the event log in order',
    access: 'read',
    query: ListEventsQuery,
    reply: page(EventView),
    errors: { 410: CURSOR_EXPIRED },
  }),
  query: route({
    service: 'events',
    name: 'events.events.query',
    method: 'POST',
    path: '/events/query',
    status: 200,
    summary: 'Read the event log in order, with a filter too long for a URL',
    access: 'read',
    body: EventQueryDto,
    reply: page(EventView),
    errors: { 410: CURSOR_EXPIRED },
    idempotent: true,
    mcp: {
      tool: 'list_events',
      title: 'Read the event log',
      description:
        'The ordered event log with cursor pagination, as GET /events and POST /events/query: pass next_cursor back to continue from where the last page ended. type filters by one type, a comma-separated list or a prefix (contact.*). filter is a JSON filter in the query language over type, actor.type, actor.id, via, request_id and data.<path>, e.g. {"data.current.status":"won"} or {"data.changed":"owner_id"}; a page tests at most 5,000 events, so a short page with has_more true means: continue with next_cursor.',
    },
  }),
};

/**
 * Exports (docs/exports.md): every record of some objects at a position of the event log, kept by the
 * events service, which alone knows the log's head. A file is streamed by the gateway (`files` is a custom
 * route) from pieces `exportSteps.read` answers.
 */
export const dataExports = {
  create: route({
    service: 'events',
    name: 'events.exports.create',
    method: 'POST',
    path: '/exports',
    status: 202,
    summary: 'Export every record of some objects at a position of the event log, to files',
    access: 'read',
    permission: { resource: 'exports', action: 'read', exported: true },
    body: CreateExportDto,
    reply: resource(ExportView),
    errors: { 409: 'This key already has as many exports queued or running as it may (EXPORTS_MAX_RUNNING_PER_KEY).' },
    mcp: {
      tool: 'start_export',
      title: 'Export records',
      description:
        'Start an export of every contact and/or deal (objects, optional per-object query filter and fields) to NDJSON files. The answer is the export: GET /exports/:id shows progress, then the files and as_of, the event cursor to read on from (docs/exports.md).',
    },
  }),
  get: route({
    service: 'events',
    name: 'events.exports.get',
    method: 'GET',
    path: '/exports/:id',
    summary: 'Get an export: status, progress, and when completed its files and as_of cursor',
    access: 'read',
    reply: resource(ExportView),
  }),
  file: route({
    service: 'events',
    name: 'events.exports.file',
    method: 'GET',
    path: '/exports/:id/files/:name',
    status: 200,
    summary: 'Download a file of a completed export (streamed; Range: bytes=a-b resumes a broken download)',
    access: 'read',
    // The file shows the records of the export's objects: the events service checks read on each, as for GET /exports/:id.
    reads: [],
    reply: noContent,
    errors: { 416: 'A Range that does not fit the file (`range_not_satisfiable`).' },
    custom: true,
  }),
};

/** What the gateway asks of the events service while it streams an export's file. */
export const exportSteps = {
  read: internal<ReadExportFileRequest, ReadExportFileReply>({ service: 'events', name: 'events.exports.read', idempotent: true }),
};

/**
 * The change log across every object. The contacts service answers it: it keeps most objects, and asks
 * the deals service for its slice, merging both in id order (oldest first) so one cursor walks them all.
 */
export const changes = {
  list: route({
    service: 'contacts',
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

export const webhooks = {
  create: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.create',
    method: 'POST',
    path: '/webhooks',
    summary: 'Subscribe a URL to events',
    access: 'write',
    body: CreateWebhookDto,
    reply: resource(WebhookView, { secret: true }),
  }),
  list: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.list',
    method: 'GET',
    path: '/webhooks',
    summary: 'List webhook subscriptions',
    access: 'read',
    query: ListWebhooksQuery,
    reply: page(WebhookView),
  }),
  get: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.get',
    method: 'GET',
    path: '/webhooks/:id',
    summary: 'Get a webhook subscription',
    access: 'read',
    reply: resource(WebhookView),
  }),
  update: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.update',
    method: 'PATCH',
    path: '/webhooks/:id',
    summary: 'Update a webhook subscription',
    access: 'write',
    body: UpdateWebhookDto,
    reply: resource(WebhookView),
  }),
  remove: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.delete',
    method: 'DELETE',
    path: '/webhooks/:id',
    summary: 'Delete a webhook subscription',
    access: 'write',
    reply: noContent,
  }),
  deliveries: route({
    service: 'webhooks',
    name: 'webhooks.webhooks.deliveries',
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    summary: 'List delivery attempts',
    access: 'read',
    // Attempts name their event by id only; the event itself is read under the events' rules.
    reads: [],
    query: ListDeliveriesQuery,
    reply: page(DeliveryView),
  }),
  ping: route({
    service: 'webhooks',
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
    service: 'webhooks',
    name: 'webhooks.webhooks.replay',
    method: 'POST',
    path: '/webhooks/:id/replay',
    status: 200,
    summary: 'Deliver one past event again',
    access: 'write',
    body: ReplayWebhookDto,
    reply: resource(WebhookView),
    errors: {
      410: 'The event is older than the copies the webhooks service keeps (WEBHOOKS_EVENT_RETENTION_DAYS): it can no longer be sent (`cursor_expired`).',
    },
  }),
};

export const capture = {
  capture: route({
    service: 'contacts',
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
