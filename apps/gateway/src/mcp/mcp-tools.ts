import { PageQuery } from '@crm/common';
import {
  ContactsRpc,
  CreateContactDto,
  CreateDealDto,
  DealsRpc,
  EventsRpc,
  ListContactsQuery,
  ListDealsQuery,
  ListEventsQuery,
  MergeContactsDto,
  MoveDealStageDto,
  ObjectRecordInputDto,
  ObjectRecordsRpc,
  PipelinesRpc,
  UpdateContactDto,
  UpdateDealDto,
  UpdateObjectRecordDto,
} from '@crm/contracts';
import { inputSchema, JsonSchema } from './input-schemas';

/** What a tool call becomes: the same request parts an HTTP route hands to the owning service. */
export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  /** `read` tools are visible to read and read-write keys, `write` tools to read-write keys only. */
  access: 'read' | 'write';
  rpc: string;
  destructive?: boolean;
  idempotent?: boolean;
  /** The input schema; `objects` are the live custom object slugs, for tools that take one. */
  input(objects: string[]): JsonSchema;
  route(args: Record<string, unknown>): RequestParts;
}

const id = (prefix: string, what: string): JsonSchema => ({ type: 'string', description: `The ${what} id (${prefix}_…).`, maxLength: 64 });
const objectSlug = (objects: string[]): JsonSchema => ({
  type: 'string',
  description: 'Slug of a custom object, as listed by describe_schema.',
  ...(objects.length ? { enum: objects } : {}),
});

/** Query values travel as strings, as they would in a URL; the service parses them with the same rules. */
function asQuery(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => [key, typeof value === 'number' || typeof value === 'boolean' ? String(value) : value]),
  );
}

function split(args: Record<string, unknown>, ...keys: string[]): [Record<string, string>, Record<string, unknown>] {
  const picked: Record<string, string> = {};
  const rest: Record<string, unknown> = { ...args };
  for (const key of keys) {
    if (key in rest) picked[key === 'object' ? 'slug' : key] = String(rest[key]);
    delete rest[key];
  }
  return [picked, rest];
}

const query = (args: Record<string, unknown>): RequestParts => ({ params: {}, query: asQuery(args), body: null });
const body = (args: Record<string, unknown>): RequestParts => ({ params: {}, query: {}, body: args });
const byId = (args: Record<string, unknown>): RequestParts => ({ params: split(args, 'id')[0], query: {}, body: null });
const byIdWithBody = (args: Record<string, unknown>): RequestParts => {
  const [params, rest] = split(args, 'id');
  return { params, query: {}, body: rest };
};

export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'describe_schema',
    title: 'Describe the CRM schema',
    description: 'Every built-in and custom object with its field definitions (types, options, required fields, enforcement level).',
    access: 'read',
    rpc: ContactsRpc.Schema,
    idempotent: true,
    input: () => inputSchema({}),
    route: () => ({ params: {}, query: {}, body: null }),
  },
  {
    name: 'search_contacts',
    title: 'Search contacts',
    description: 'List contacts, newest first, with every filter of GET /contacts (search text, stage, source, company, owner, ICP score and date ranges) and cursor pagination.',
    access: 'read',
    rpc: ContactsRpc.List,
    idempotent: true,
    input: () => inputSchema({ from: ListContactsQuery }),
    route: query,
  },
  {
    name: 'get_contact',
    title: 'Get a contact',
    description: 'One contact with its relationships and included company.',
    access: 'read',
    rpc: ContactsRpc.Get,
    idempotent: true,
    input: () => inputSchema({ extra: { id: id('cont', 'contact') }, required: ['id'] }),
    route: byId,
  },
  {
    name: 'create_contact',
    title: 'Create a contact',
    description: 'Creates a contact; email is required and unique. Emits contact.created.',
    access: 'write',
    rpc: ContactsRpc.Create,
    input: () => inputSchema({ from: CreateContactDto }),
    route: body,
  },
  {
    name: 'update_contact',
    title: 'Update a contact',
    description: 'Changes only the fields given; null clears a field. Emits contact.updated when something changed.',
    access: 'write',
    rpc: ContactsRpc.Update,
    idempotent: true,
    input: () => inputSchema({ extra: { id: id('cont', 'contact') }, required: ['id'], from: UpdateContactDto }),
    route: byIdWithBody,
  },
  {
    name: 'merge_contacts',
    title: 'Merge two contacts',
    description: "Moves the loser's deals, activities and tasks to the winner and deletes the loser. Cannot be undone.",
    access: 'write',
    rpc: ContactsRpc.Merge,
    destructive: true,
    idempotent: true,
    input: () => inputSchema({ from: MergeContactsDto }),
    route: body,
  },
  {
    name: 'list_deals',
    title: 'List deals',
    description: 'List deals with every filter of GET /deals (pipeline, stage, status, contact, company, owner, value and date ranges) and cursor pagination.',
    access: 'read',
    rpc: DealsRpc.List,
    idempotent: true,
    input: () => inputSchema({ from: ListDealsQuery }),
    route: query,
  },
  {
    name: 'get_deal',
    title: 'Get a deal',
    description: 'One deal with its pipeline, stage, contact and company.',
    access: 'read',
    rpc: DealsRpc.Get,
    idempotent: true,
    input: () => inputSchema({ extra: { id: id('deal', 'deal') }, required: ['id'] }),
    route: byId,
  },
  {
    name: 'create_deal',
    title: 'Create a deal',
    description: 'Creates a deal in a pipeline stage. Emits deal.created.',
    access: 'write',
    rpc: DealsRpc.Create,
    input: () => inputSchema({ from: CreateDealDto }),
    route: body,
  },
  {
    name: 'update_deal',
    title: 'Update a deal',
    description: 'Changes only the fields given; use move_deal_stage to change the stage. Emits deal.updated when something changed.',
    access: 'write',
    rpc: DealsRpc.Update,
    idempotent: true,
    input: () => inputSchema({ extra: { id: id('deal', 'deal') }, required: ['id'], from: UpdateDealDto }),
    route: byIdWithBody,
  },
  {
    name: 'move_deal_stage',
    title: 'Move a deal to another stage',
    description: 'Moves a deal to a stage of its pipeline, recording stage history. Emits deal.stage_changed, and deal.won or deal.lost for closing stages.',
    access: 'write',
    rpc: DealsRpc.MoveStage,
    input: () => inputSchema({ extra: { id: id('deal', 'deal') }, required: ['id'], from: MoveDealStageDto }),
    route: byIdWithBody,
  },
  {
    name: 'get_deal_history',
    title: 'Stage history of a deal',
    description: 'Every stage change of a deal, oldest first, with cursor pagination.',
    access: 'read',
    rpc: DealsRpc.History,
    idempotent: true,
    input: () => inputSchema({ extra: { id: id('deal', 'deal') }, required: ['id'], from: PageQuery }),
    route: (args) => {
      const [params, rest] = split(args, 'id');
      return { params, query: asQuery(rest), body: null };
    },
  },
  {
    name: 'list_pipelines',
    title: 'List pipelines',
    description: 'Pipelines with their stages in order.',
    access: 'read',
    rpc: PipelinesRpc.List,
    idempotent: true,
    input: () => inputSchema({ from: PageQuery }),
    route: query,
  },
  {
    name: 'list_events',
    title: 'Read the event log',
    description:
      'The ordered event log with cursor pagination, as GET /events: pass next_cursor back to continue from where the last page ended. type filters by one type, a comma-separated list or a prefix (contact.*).',
    access: 'read',
    rpc: EventsRpc.List,
    idempotent: true,
    input: () => inputSchema({ from: ListEventsQuery }),
    route: query,
  },
  {
    name: 'list_records',
    title: 'List records of a custom object',
    description: 'Records of one custom object, newest first, with cursor pagination.',
    access: 'read',
    rpc: ObjectRecordsRpc.List,
    idempotent: true,
    input: (objects) => inputSchema({ extra: { object: objectSlug(objects) }, required: ['object'], from: PageQuery }),
    route: (args) => {
      const [params, rest] = split(args, 'object');
      return { params, query: asQuery(rest), body: null };
    },
  },
  {
    name: 'get_record',
    title: 'Get a custom object record',
    description: 'One record of a custom object.',
    access: 'read',
    rpc: ObjectRecordsRpc.Get,
    idempotent: true,
    input: (objects) => inputSchema({ extra: { object: objectSlug(objects), id: id('rec', 'record') }, required: ['object', 'id'] }),
    route: (args) => ({ params: split(args, 'object', 'id')[0], query: {}, body: null }),
  },
  {
    name: 'create_record',
    title: 'Create a custom object record',
    description: "Creates a record; values are checked against the object's fields per its enforcement level (soft warnings are returned).",
    access: 'write',
    rpc: ObjectRecordsRpc.Create,
    input: (objects) => inputSchema({ extra: { object: objectSlug(objects) }, required: ['object'], from: ObjectRecordInputDto }),
    route: (args) => {
      const [params, rest] = split(args, 'object');
      return { params, query: {}, body: rest };
    },
  },
  {
    name: 'update_record',
    title: 'Update a custom object record',
    description: 'Changes the values given, keeping the others.',
    access: 'write',
    rpc: ObjectRecordsRpc.Update,
    idempotent: true,
    input: (objects) => inputSchema({ extra: { object: objectSlug(objects), id: id('rec', 'record') }, required: ['object', 'id'], from: UpdateObjectRecordDto }),
    route: (args) => {
      const [params, rest] = split(args, 'object', 'id');
      return { params, query: {}, body: rest };
    },
  },
];
