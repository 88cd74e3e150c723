import { DomainError, ErrorCode, Logger } from '@crm/common';
import { customObjectEntry, describePermission, ObjectEntry, Ops, firstLacking, permissionsNeeded, permits, permitsOnSomeObject } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolRequestSchema, CallToolResult, ListToolsRequestSchema, Tool } from '@modelcontextprotocol/sdk/types.js';
import { hiddenSummaryTypes, redactSummaries } from '../http/related-summaries';
import { contextOf, GatewayRequest, Principal } from '../http/request-context';
import { LOGGER } from '../tokens';
import type { McpTool, ToolEnv } from './mcp-tools';

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
  TOOLS: readonly McpTool[];
  checkArguments: (tool: McpTool, args: Record<string, unknown>) => void;
}
let runtime: Promise<McpRuntime> | undefined;
function mcpRuntime(): Promise<McpRuntime> {
  runtime ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('./mcp-tools'),
    import('./record-tools'),
  ]).then(([{ Server }, { ListToolsRequestSchema, CallToolRequestSchema }, { TOOLS }, { checkArguments }]) => ({
    Server,
    ListToolsRequestSchema,
    CallToolRequestSchema,
    TOOLS,
    checkArguments,
  }));
  return runtime;
}

/** The same rule as the tool's HTTP route: a tool a key could not call is not offered to it. */
function visibleTo(principal: Principal, tool: McpTool): boolean {
  if (tool.access === 'public' || tool.access === 'any-key') return true;
  const action = tool.action ?? (tool.access === 'read' ? 'read' : 'write');
  // A generic record tool names its object in its arguments; search and list_changes answer what the key may read.
  const generic = tool.resource === undefined || tool.resource === 'objects.:slug' || tool.narrowed;
  return generic ? permitsOnSomeObject(principal.permissions, action) : permits(principal.permissions, tool.resource!, action);
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
    const { Server, ListToolsRequestSchema, CallToolRequestSchema, TOOLS, checkArguments } = await mcpRuntime();
    const principal = req.principal!;
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {} },
      instructions:
        "A go-to-market CRM: contacts, deals in pipelines, custom objects and an ordered event log. Call describe_schema for the objects, describe_object for one object's fields.",
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.filter((tool) => visibleTo(principal, tool)).map(listing) }));
    server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const args = call.params.arguments ?? {};
      const tool = TOOLS.find((candidate) => candidate.name === call.params.name);
      if (!tool) return failure({ code: ErrorCode.NotFound, message: `No tool named '${call.params.name}'.` });
      if (!visibleTo(principal, tool)) return failure(forbidden(principal, tool.name));
      return this.settle(req, tool.name, async () => {
        if (tool.checksArguments) checkArguments(tool, args);
        return answered(tool.title, await tool.run(args, this.envFor(req, principal)));
      });
    });
    return server;
  }

  /** What a tool call runs with: each operation is refused as its HTTP route would refuse the key. */
  private envFor(req: GatewayRequest, principal: Principal): ToolEnv {
    let objects: Promise<ObjectEntry[]> | undefined;
    return {
      call: async (op, parts) => {
        const declared = op.http?.permission;
        const lacking = declared && firstLacking(principal.permissions, permissionsNeeded(declared, parts.params ?? {}, parts.body));
        if (op.http && (!declared || lacking)) {
          const missing = lacking ? `: it lacks ${describePermission(lacking)}` : '';
          const { code, message } = forbidden(principal, `${op.http.method} ${op.http.path}${missing}`);
          throw new DomainError(code, message);
        }
        const answer = await this.rpc.call(op, contextOf(req, 'mcp'), { params: {}, query: {}, body: null, ...parts }, { trace: req.traceContext });
        const hidden = hiddenSummaryTypes(principal.permissions);
        return hidden ? redactSummaries(answer, hidden) : answer;
      },
      customObjects: () => (objects ??= this.customObjects(req)),
    };
  }

  /** The active custom objects, from the live schema, entering the object registry's shape. */
  private async customObjects(req: GatewayRequest): Promise<ObjectEntry[]> {
    const schema = await this.rpc.call(Ops.schema.get, contextOf(req), {}, { trace: req.traceContext });
    return schema.data.objects.filter((object) => object.kind === 'custom').map(customObjectEntry);
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

/** A tool as tools/list shows it. */
function listing(tool: McpTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input as Tool['inputSchema'],
    annotations: {
      readOnlyHint: tool.access === 'read',
      destructiveHint: tool.access === 'write' ? Boolean(tool.destructive) : undefined,
      idempotentHint: tool.idempotent ?? false,
      openWorldHint: false,
    },
  };
}

function forbidden(principal: Principal, what: string): { code: ErrorCode; message: string } {
  const caller = principal.subject !== undefined ? 'token' : 'key';
  return { code: ErrorCode.Forbidden, message: `This ${caller}'s scope (${principal.scope}) does not allow ${what}.` };
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
    if (Array.isArray(item.objects)) {
      const slugs = (item.objects as Array<{ slug: string; kind?: string }>).map((object) => `${object.slug}${object.kind === 'custom' ? ' (custom)' : ''}`);
      return `${slugs.length} objects: ${slugs.join(', ')}. describe_object gives one's fields; every record tool takes any of them (upsert_records all but users).`;
    }
  }
  return `${title}: done.`;
}
