import { DomainError, ErrorCode, Logger } from '@crm/common';
import { Ops, scopeGrants } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolRequestSchema, CallToolResult, ListToolsRequestSchema, Tool } from '@modelcontextprotocol/sdk/types.js';
import { contextOf, GatewayRequest, Principal } from '../http/request-context';
import { LOGGER } from '../tokens';
import type { ToolSpec } from './mcp-tools';
import { QUERY_TOOL_PREFIX, QueryObject, queryObjectOf, queryObjects, queryInputSchema, queryRequest, queryToolDescription } from './query-tools';

const SERVER_INFO = { name: 'crm', version: '0.1.0' };

/**
 * What serving MCP takes: the SDK's server and request schemas, and the tool table (with the JSON Schema
 * generator behind its input schemas). Memory: loaded on the first /mcp request, not at start-up, as the
 * SDK, zod and ajv are some 250 modules a gateway that no agent calls never needs.
 */
interface McpRuntime {
  Server: typeof Server;
  ListToolsRequestSchema: typeof ListToolsRequestSchema;
  CallToolRequestSchema: typeof CallToolRequestSchema;
  TOOLS: readonly ToolSpec[];
}
let runtime: Promise<McpRuntime> | undefined;
function mcpRuntime(): Promise<McpRuntime> {
  runtime ??= Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/types.js'), import('./mcp-tools')]).then(
    ([{ Server }, { ListToolsRequestSchema, CallToolRequestSchema }, { TOOLS }]) => ({ Server, ListToolsRequestSchema, CallToolRequestSchema, TOOLS }),
  );
  return runtime;
}

/** The same rule as the tool's HTTP route: a tool a key could not call is not offered to it. */
function visibleTo(principal: Principal, tool: ToolSpec): boolean {
  return scopeGrants(principal.scope, tool.access);
}

/**
 * The MCP server for one request: the caller's key decides which tools exist, and every tool call goes
 * to the owning service as its operation, exactly as the matching HTTP route does
 * (same validation, rules, events); only the answer's wrapping differs.
 */
@Injectable()
export class McpService {
  constructor(
    private readonly rpc: RpcCaller,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async serverFor(req: GatewayRequest): Promise<Server> {
    const { Server, ListToolsRequestSchema, CallToolRequestSchema, TOOLS } = await mcpRuntime();
    const principal = req.principal!;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {} },
      instructions:
        'A go-to-market CRM: contacts, deals in pipelines, custom objects and an ordered event log. Call describe_schema first to learn the fields.',
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await this.describeTools(req, principal, TOOLS) }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => this.callTool(req, principal, TOOLS, call.params.name, call.params.arguments ?? {}));
    return server;
  }

  private async describeTools(req: GatewayRequest, principal: Principal, table: readonly ToolSpec[]): Promise<Tool[]> {
    const tools = table.filter((tool) => visibleTo(principal, tool));
    const reads = scopeGrants(principal.scope, 'read');
    const objects = reads || tools.some((tool) => tool.takesObject) ? await this.customObjects(req) : [];
    const queries = reads ? await this.queryTools(req, objects) : [];
    return [...tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input(objects) as Tool['inputSchema'],
      annotations: {
        title: tool.title,
        readOnlyHint: tool.access === 'read',
        destructiveHint: tool.access === 'write' ? Boolean(tool.destructive) : undefined,
        idempotentHint: tool.idempotent ?? false,
        openWorldHint: false,
      },
    })), ...queries];
  }

  /**
   * One query tool per object, its input schema listing the object's paths as they are now (custom fields
   * and relation paths included) with the operators each allows. An object whose service does not answer
   * is left out of this listing rather than failing it.
   */
  private async queryTools(req: GatewayRequest, customObjects: string[]): Promise<Tool[]> {
    const described = await Promise.all(
      queryObjects(customObjects).map(async (object): Promise<Tool | undefined> => {
        try {
          const { fields } = await this.rpc.call(object.fields, contextOf(req), { body: { object: object.object } }, { trace: req.traceContext });
          const title = `Query ${object.custom ? `${object.object} records` : object.object}`;
          return {
            name: `${QUERY_TOOL_PREFIX}${object.object}`,
            title,
            description: queryToolDescription(object),
            inputSchema: queryInputSchema(fields) as Tool['inputSchema'],
            annotations: { title, readOnlyHint: true, idempotentHint: true, openWorldHint: false },
          };
        } catch (err) {
          this.logger.warn({ err: (err as Error).message, request_id: req.id, object: object.object }, 'could not describe an object for its MCP query tool');
          return undefined;
        }
      }),
    );
    return described.filter((tool): tool is Tool => tool !== undefined);
  }

  /** Slugs of the active custom objects, from the live schema, so record tools can name them. */
  private async customObjects(req: GatewayRequest): Promise<string[]> {
    try {
      const schema = await this.rpc.call(Ops.schema.get, contextOf(req), {}, { trace: req.traceContext });
      return schema.data.objects.filter((object) => object.kind === 'custom').map((object) => object.slug);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, request_id: req.id }, 'could not read the schema for MCP tool descriptions');
      return [];
    }
  }

  private async callTool(req: GatewayRequest, principal: Principal, table: readonly ToolSpec[], name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const tool = table.find((candidate) => candidate.name === name);
    const queried = tool ? undefined : queryObjectOf(name);
    if (queried) return this.callQuery(req, principal, queried, name, args);
    if (!tool) return failure({ code: ErrorCode.NotFound, message: `No tool named '${name}'.` });
    if (!visibleTo(principal, tool)) {
      return failure({ code: ErrorCode.Forbidden, message: `This key's scope (${principal.scope}) does not allow ${name}.` });
    }
    return this.settle(req, name, async () => answered(tool.title, await this.rpc.call(tool.op, contextOf(req, 'mcp'), tool.route(args), { trace: req.traceContext })));
  }

  /** A query tool: the same operation as POST /<object>/query, for keys that may read. */
  private async callQuery(req: GatewayRequest, principal: Principal, object: QueryObject, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    if (!scopeGrants(principal.scope, 'read')) return failure({ code: ErrorCode.Forbidden, message: `This key's scope (${principal.scope}) does not allow ${name}.` });
    return this.settle(req, name, async () => answered(`Query ${object.object}`, await this.rpc.call(object.op, contextOf(req, 'mcp'), queryRequest(object, args), { trace: req.traceContext })));
  }

  /** A tool's outcome: its answer, or its error in the API's shape. */
  private async settle(req: GatewayRequest, name: string, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof DomainError) return failure(err.toBody());
      this.logger.error({ err, request_id: req.id, tool: name }, 'MCP tool call failed unexpectedly');
      return failure({ code: ErrorCode.Internal, message: 'An internal error occurred.' });
    }
  }
}

/** The tool's structured result, with one line an agent (or its user) can read without parsing the JSON. */
function answered(title: string, result: unknown): CallToolResult {
  const structured = (result ?? {}) as Record<string, unknown>;
  return { content: [{ type: 'text', text: summarize(title, structured) }], structuredContent: structured };
}

function failure(error: { code: string; message: string; details?: unknown }): CallToolResult {
  const details = Array.isArray(error.details) ? ` ${error.details.map((d: { field: string; message: string }) => `${d.field}: ${d.message}`).join('; ')}` : '';
  return { isError: true, content: [{ type: 'text', text: `${error.code}: ${error.message}${details}` }], structuredContent: { error } };
}

function summarize(title: string, result: Record<string, unknown>): string {
  const data = result.data;
  if (Array.isArray(data)) {
    const more = result.has_more ? `; more available with cursor ${String(result.next_cursor)}` : '';
    return `${title}: ${data.length} item${data.length === 1 ? '' : 's'}${more}.`;
  }
  if (data && typeof data === 'object') {
    const item = data as Record<string, unknown>;
    const label = item.email ?? item.name ?? item.slug ?? '';
    if (typeof item.id === 'string') return `${title}: ${item.id}${label ? ` (${String(label)})` : ''}.`;
    if (Array.isArray(item.objects)) return `${item.objects.length} objects in the schema.`;
  }
  return `${title}: done.`;
}
