import { Access, AnyOperation, builtInEntry, McpExposure, ObjectEntry, Ops, PermissionAction } from '@crm/contracts';
import { inputSchema, JsonSchema } from './input-schemas';
import { AGGREGATE_TOOLS } from './aggregate-tools';
import { RECORD_TOOLS } from './record-tools';
import { FIND_DUPLICATES } from './duplicate-tools';

/** What a tool call becomes: the same request parts an HTTP route hands to the owning service. */
export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** What a tool runs with: the caller's operations and the live schema. */
export interface ToolEnv {
  /** Runs an operation as its HTTP route does, refused (`forbidden`) when the key's scope does not allow the route. */
  call(op: AnyOperation, parts: Partial<RequestParts>): Promise<unknown>;
  /** The active custom objects, as registry entries. */
  customObjects(): Promise<ObjectEntry[]>;
}

/** One MCP tool: its listing, the scope it needs, and what a call does. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  access: Access;
  /**
   * The permission it needs: `resource` for a tool of one operation; a generic record tool, which takes
   * `object` as an argument, names none and is offered when `action` is allowed on some object (each call
   * is checked for its object). `action` defaults to `read` for reads and `write` for changes.
   */
  resource?: string;
  action?: PermissionAction;
  /** It answers only what the key may read (search, list_changes): offered when the key may read some object. */
  narrowed?: boolean;
  idempotent: boolean;
  /** Cannot be undone: agents ask before calling it. */
  destructive?: boolean;
  input: JsonSchema;
  /** Checks the arguments against `input` before running: the operation's service does not see them as they are. */
  checksArguments?: boolean;
  run(args: Record<string, unknown>, context: ToolEnv): Promise<unknown>;
}

/** A path parameter as an argument: a record's id is described by its object's noun and id prefix. */
function pathArguments(path: string): Array<{ param: string; schema: JsonSchema }> {
  return [...path.matchAll(/([\w-]+)\/:(\w+)/g)].map(([, collection, param]) => {
    const object = builtInEntry(collection);
    const description = object && param === 'id' ? `The ${object.one} id (${object.prefix}_…).` : `The ${param.replace(/_/g, ' ')}.`;
    return { param, schema: { type: 'string', description, maxLength: 64 } };
  });
}

/** Query values travel as strings, as they would in a URL; the service parses them with the same rules. */
export function asQuery(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, typeof value === 'number' || typeof value === 'boolean' ? String(value) : value]));
}

/** An operation of the table offered as a tool of its own; everything but the wording is read from the operation. */
function toolOf(op: AnyOperation & { mcp: McpExposure }): McpTool {
  const http = op.http!;
  const path = pathArguments(http.path);
  const reads = http.method === 'GET';
  const from = (reads ? op.query : op.body) as (new () => object) | undefined;
  const { tool: name, fixed, ...wording } = op.mcp;
  const route = (args: Record<string, unknown>): RequestParts => {
    const params: Record<string, string> = {};
    const rest: Record<string, unknown> = { ...args };
    for (const { param } of path) {
      if (param in rest) params[param] = String(rest[param]);
      delete rest[param];
    }
    return reads ? { params, query: asQuery(rest), body: null } : { params, query: {}, body: { ...rest, ...fixed } };
  };
  return {
    name,
    ...wording,
    access: http.access,
    ...(http.permission ? { resource: http.permission.resource, action: http.permission.action, narrowed: http.permission.narrowed } : {}),
    idempotent: op.idempotent,
    input: inputSchema({
      extra: Object.fromEntries(path.map(({ param, schema }) => [param, schema])),
      required: path.map(({ param }) => param),
      from,
      omit: Object.keys(fixed ?? {}),
    }),
    run: (args, context) => context.call(op, route(args)),
  };
}

export const TOOLS: readonly McpTool[] = [
  ...Object.values(Ops)
    .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
    .filter((op): op is AnyOperation & { mcp: McpExposure } => Boolean(op.mcp && op.http))
    .map(toolOf),
  ...RECORD_TOOLS,
  FIND_DUPLICATES,
  ...AGGREGATE_TOOLS,
];
