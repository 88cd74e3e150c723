import { IdPrefix } from '@crm/common';
import { Access, AnyOperation, McpExposure, Ops } from '@crm/contracts';
import { inputSchema, JsonSchema } from './input-schemas';

/** What a tool call becomes: the same request parts an HTTP route hands to the owning service. */
export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** An operation of the table offered as an MCP tool; everything but the wording is read from the operation. */
export interface ToolSpec extends Omit<McpExposure, 'tool'> {
  name: string;
  op: AnyOperation;
  access: Access;
  idempotent: boolean;
  /** Takes a custom object's slug, so its input schema lists the live ones. */
  takesObject: boolean;
  /** The input schema; `objects` are the live custom object slugs, for tools that take one. */
  input(objects: string[]): JsonSchema;
  route(args: Record<string, unknown>): RequestParts;
}

/** Path parameters as agents name them: a custom object's slug is its `object`. */
const ARGUMENT_OF: Record<string, string> = { slug: 'object' };
const PREFIX_OF: Record<string, IdPrefix> = { contacts: IdPrefix.Contact, deals: IdPrefix.Deal, records: IdPrefix.ObjectRecord };

function pathArguments(path: string): Array<{ param: string; argument: string; schema(objects: string[]): JsonSchema }> {
  return [...path.matchAll(/([\w-]+)\/:(\w+)/g)].map(([, collection, param]) => {
    const argument = ARGUMENT_OF[param] ?? param;
    if (argument === 'object') {
      return {
        param,
        argument,
        schema: (objects) => ({ type: 'string', description: 'Slug of a custom object, as listed by describe_schema.', ...(objects.length ? { enum: objects } : {}) }),
      };
    }
    const what = collection.replace(/s$/, '');
    const prefix = PREFIX_OF[collection];
    return { param, argument, schema: () => ({ type: 'string', description: `The ${what} id${prefix ? ` (${prefix}_…)` : ''}.`, maxLength: 64 }) };
  });
}

/** Query values travel as strings, as they would in a URL; the service parses them with the same rules. */
function asQuery(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([key, value]) => [key, typeof value === 'number' || typeof value === 'boolean' ? String(value) : value]),
  );
}

function toolOf(op: AnyOperation & { mcp: McpExposure }): ToolSpec {
  const http = op.http!;
  const path = pathArguments(http.path);
  const reads = http.method === 'GET';
  const from = (reads ? op.query : op.body) as (new () => object) | undefined;
  const { tool: name, fixed, ...wording } = op.mcp;
  return {
    name,
    ...wording,
    op,
    access: http.access,
    idempotent: op.idempotent,
    takesObject: path.some(({ argument }) => argument === 'object'),
    input: (objects) =>
      inputSchema({
        extra: Object.fromEntries(path.map(({ argument, schema }) => [argument, schema(objects)])),
        required: path.map(({ argument }) => argument),
        from,
        omit: Object.keys(fixed ?? {}),
      }),
    route: (args) => {
      const params: Record<string, string> = {};
      const rest: Record<string, unknown> = { ...args };
      for (const { param, argument } of path) {
        if (argument in rest) params[param] = String(rest[argument]);
        delete rest[argument];
      }
      return reads ? { params, query: asQuery(rest), body: null } : { params, query: {}, body: { ...rest, ...fixed } };
    },
  };
}

export const TOOLS: readonly ToolSpec[] = Object.values(Ops)
  .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
  .filter((op): op is AnyOperation & { mcp: McpExposure } => Boolean(op.mcp && op.http))
  .map(toolOf);
