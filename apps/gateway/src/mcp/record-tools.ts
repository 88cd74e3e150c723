import { validationFailed } from '@crm/common';
import { AnyOperation, BatchLimits, DomainError, ErrorCode, MAX_PAGE_SIZE, QueryFieldsReply, QueryLimits } from '@crm/contracts';
import { BATCH_TOOL } from './batch-tools';
import { inputSchema, JsonSchema } from './input-schemas';
import { asQuery, type McpTool, type ToolEnv } from './mcp-tools';
import { DESCRIBE_SCHEMA } from './schema-tools';
import { ASSOCIATIONS, AssociationRoutes, BUILT_IN_OBJECTS, builtIn, CUSTOM_OBJECT, ObjectRoutes } from './objects';
import { describePaths } from './query-tools';

/**
 * The tools that take the object as an argument: one of each kind for every object, built-in or custom,
 * so the tool list stays the same size however many objects and fields the schema holds. Each call
 * runs the object's own HTTP operation; describe_object tells an agent what that operation accepts.
 */

const OBJECT: JsonSchema = { type: 'string', description: 'An object slug from describe_schema (contacts, deals, a custom object…).' };
const ID: JsonSchema = { type: 'string', maxLength: 64 };
const OBJECT_AND_ID = { object: OBJECT, id: ID };
const PAGE = { limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE }, cursor: { type: 'string' } } satisfies Record<string, JsonSchema>;

function invalid(field: string, message: string): DomainError {
  return validationFailed([{ field, code: 'invalid_value', message }]);
}

interface Target {
  slug: string;
  routes: ObjectRoutes;
  /** The path parameters every route of the object takes: a custom object's slug. */
  params: Record<string, string>;
}

export async function objectOf(args: Record<string, unknown>, context: ToolEnv): Promise<Target> {
  const slug = String(args.object);
  const routes = builtIn(slug);
  if (routes) return { slug, routes, params: {} };
  const custom = await context.customObjects();
  if (custom.some((object) => object.slug === slug)) return { slug, routes: CUSTOM_OBJECT, params: { slug } };
  throw invalid('object', `object must be one of: ${[...Object.keys(BUILT_IN_OBJECTS), ...custom.map((object) => object.slug)].join(', ')}`);
}

/** The arguments given, leaving out those the tool itself consumes. */
function without(args: Record<string, unknown>, ...names: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([name, value]) => !names.includes(name) && value !== undefined));
}

function body(args: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = args[name];
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(name, `${name} must be an object: the body of the object's HTTP route`);
  return value as Record<string, unknown>;
}

function associationOf(args: Record<string, unknown>, change: boolean): AssociationRoutes & { param: string } {
  const pair = `${String(args.object)}.${String(args.related)}`;
  const routes = Object.hasOwn(ASSOCIATIONS, pair) ? ASSOCIATIONS[pair] : undefined;
  if (!routes || (change && !routes.add)) {
    const pairs = Object.entries(ASSOCIATIONS)
      .filter(([, candidate]) => !change || candidate.add)
      .map(([pair]) => pair.replace('.', ' → '));
    throw invalid('related', `object and related must be one of: ${pairs.join(', ')}`);
  }
  return routes as AssociationRoutes & { param: string };
}

/** A tool that runs one route of the object on the record `id` names, with no body. */
const onRecord =
  (route: (routes: ObjectRoutes) => AnyOperation): McpTool['run'] =>
  async (args, context) => {
    const { routes, params } = await objectOf(args, context);
    return context.call(route(routes), { params: { ...params, id: String(args.id) } });
  };

/** What a tool that reads declares; the tool checks its own arguments. */
export const read = { access: 'read' as const, idempotent: true, checksArguments: true };
const write = { access: 'write' as const, idempotent: false, checksArguments: true };

export function objectInput(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

export const RECORD_TOOLS: readonly McpTool[] = [
  DESCRIBE_SCHEMA,
  {
    name: 'describe_object',
    title: 'Describe an object',
    description:
      "One object's query paths (fields, custom fields, relation paths) with their type, operators and enum values, and the JSON Schemas of its create and update bodies.",
    ...read,
    // Its paths and bodies are the schema (GET /schema's, as a tool): the internal operation it runs checks nothing itself.
    resource: 'schema',
    input: objectInput({ object: OBJECT }, ['object']),
    run: async (args, context) => {
      const { slug, routes } = await objectOf(args, context);
      const { fields } = (await context.call(routes.fields, { body: { object: slug } })) as QueryFieldsReply;
      // Closed as the service's whitelist is: a field not listed is refused.
      const bodyOf = (op: typeof routes.create) => inputSchema({ from: op.body as new () => object });
      return { data: { object: slug, one: routes.one, paths: describePaths(fields), create: bodyOf(routes.create), update: bodyOf(routes.update) } };
    },
  },
  {
    name: 'query_records',
    title: 'Query records',
    description:
      "Finds an object's records by a boolean filter over any path describe_object lists, sorted on any sortable path, returning only the fields asked for; page with next_cursor. $and/$or take lists of filters, $not one.",
    ...read,
    input: objectInput(
      {
        object: OBJECT,
        filter: { type: 'object', description: '{path: value} or {path: {operator: value}}; keys are ANDed.' },
        sort: {
          type: 'array',
          maxItems: QueryLimits.sortKeys,
          items: { type: 'object', properties: { field: { type: 'string' }, direction: { enum: ['asc', 'desc'] } }, required: ['field'] },
        },
        fields: { type: 'array', maxItems: QueryLimits.fields, items: { type: 'string' } },
        ...PAGE,
      },
      ['object'],
    ),
    run: async (args, context) => {
      const { routes, params } = await objectOf(args, context);
      return context.call(routes.query, { params, body: without(args, 'object') });
    },
  },
  {
    name: 'get_record',
    title: 'Get a record',
    description: 'One record of an object, with what its HTTP GET includes.',
    ...read,
    input: objectInput(OBJECT_AND_ID, ['object', 'id']),
    run: onRecord((routes) => routes.get),
  },
  {
    name: 'create_record',
    title: 'Create a record',
    description: "Creates a record; data is the body of the object's POST (describe_object has its schema). Emits <object>.created.",
    ...write,
    input: objectInput({ object: OBJECT, data: { type: 'object' } }, ['object', 'data']),
    run: async (args, context) => {
      const { routes, params } = await objectOf(args, context);
      return context.call(routes.create, { params, body: body(args, 'data') });
    },
  },
  {
    name: 'update_record',
    title: 'Update a record',
    description: "Changes only the fields data gives (the body of the object's PATCH); null clears one. Use move_deal_stage for a deal's stage.",
    ...write,
    idempotent: true,
    input: objectInput({ ...OBJECT_AND_ID, data: { type: 'object' } }, ['object', 'id', 'data']),
    run: async (args, context) => {
      const { routes, params } = await objectOf(args, context);
      return context.call(routes.update, { params: { ...params, id: String(args.id) }, body: body(args, 'data') });
    },
  },
  {
    name: 'delete_record',
    title: 'Delete a record',
    description: 'Deletes a record. Cannot be undone.',
    ...write,
    action: 'delete',
    destructive: true,
    input: objectInput(OBJECT_AND_ID, ['object', 'id']),
    run: onRecord((routes) => routes.remove),
  },
  {
    name: BATCH_TOOL,
    title: `Create or update up to ${BatchLimits.items} records`,
    description:
      'Upserts items (create bodies) matched on key (contacts: email, companies: domain, a custom object: a unique field), case-insensitive; each item answered with its status (201, 200) or error. all_or_none writes all or nothing. Costs one request per item.',
    ...write,
    input: objectInput(
      {
        object: OBJECT,
        items: { type: 'array', minItems: 1, maxItems: BatchLimits.items, items: { type: 'object' } },
        key: { type: 'string' },
        all_or_none: { type: 'boolean' },
      },
      ['object', 'items'],
    ),
    run: async (args, context) => {
      const { slug, routes, params } = await objectOf(args, context);
      if (!routes.batch) throw invalid('object', `${slug} has no batch writes`);
      return context.call(routes.batch, { params, body: { operation: 'upsert', ...without(args, 'object') } });
    },
  },
  {
    name: 'list_associations',
    title: 'List associated records',
    description:
      "A record's related records (contacts → companies or deals, companies → contacts, deals → contacts) with each role and is_primary; page with next_cursor.",
    ...read,
    input: objectInput({ ...OBJECT_AND_ID, related: { type: 'string' }, ...PAGE }, ['object', 'id', 'related']),
    run: async (args, context) =>
      context.call(associationOf(args, false).list, { params: { id: String(args.id) }, query: asQuery(without(args, 'object', 'id', 'related')) }),
  },
  {
    name: 'set_association',
    title: 'Associate two records',
    description:
      'Associates related_id with the record (contacts → companies, deals → contacts), or changes the association: role (a label set_association_labels allows; null clears it), is_primary. Emits <object>.<related>_added or _updated.',
    ...write,
    idempotent: true,
    input: objectInput({ ...OBJECT_AND_ID, related: { type: 'string' }, related_id: ID, role: { type: ['string', 'null'] }, is_primary: { type: 'boolean' } }, [
      'object',
      'id',
      'related',
      'related_id',
    ]),
    run: async (args, context) => {
      const routes = associationOf(args, true);
      const change = without(args, 'object', 'id', 'related', 'related_id');
      try {
        return await context.call(routes.add!, { params: { id: String(args.id) }, body: { [routes.param]: args.related_id, ...change } });
      } catch (err) {
        if (!(err instanceof DomainError && err.code === ErrorCode.Conflict)) throw err;
        return context.call(routes.update!, { params: { id: String(args.id), [routes.param]: String(args.related_id) }, body: change });
      }
    },
  },
  {
    name: 'remove_association',
    title: 'Remove an association',
    description: "Removes the association; removing the primary one clears the record's primary link. Emits <object>.<related>_removed.",
    ...write,
    action: 'delete',
    input: objectInput({ ...OBJECT_AND_ID, related: { type: 'string' }, related_id: ID }, ['object', 'id', 'related', 'related_id']),
    run: async (args, context) => {
      const routes = associationOf(args, true);
      return context.call(routes.remove!, { params: { id: String(args.id), [routes.param]: String(args.related_id) } });
    },
  },
];

/** A call's arguments against the tool's input schema: what the operation underneath never sees by name. */
export function checkArguments(tool: McpTool, args: Record<string, unknown>): void {
  const properties = Object.keys((tool.input.properties as Record<string, unknown>) ?? {});
  const required = (tool.input.required as string[] | undefined) ?? [];
  const issues = [
    ...Object.keys(args)
      .filter((name) => !properties.includes(name))
      .map((name) => ({ field: name, code: 'unknown_field', message: `unknown argument '${name}'; ${tool.name} takes ${properties.join(', ')}` })),
    ...required
      .filter((name) => args[name] === undefined || args[name] === null)
      .map((name) => ({ field: name, code: 'required', message: `${name} is required` })),
    ...['object', 'id', 'related', 'related_id']
      .filter((name) => properties.includes(name) && args[name] !== undefined && args[name] !== null && typeof args[name] !== 'string')
      .map((name) => ({ field: name, code: 'invalid_value', message: `${name} must be a string` })),
  ];
  if (issues.length) throw validationFailed(issues);
}
