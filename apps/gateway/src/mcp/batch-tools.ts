import type { FastifyRequest } from 'fastify';
import { MCP_PATH } from '../http/access.hook';
import { BATCH_WRITES } from '../http/request-body';

/** `upsert_contacts`, `upsert_companies`…: the tools that run a batch write. */
const BATCH_TOOLS = new Set(BATCH_WRITES.flatMap((op) => (op.mcp ? [op.mcp.tool] : [])));

interface ToolCall {
  method?: unknown;
  params?: { name?: unknown; arguments?: { items?: unknown } };
}

/**
 * The items of a POST /mcp that calls a batch tool: its `items` argument, which the tool passes on as
 * the body's `items` of its route. Undefined for any other request. Read before the call is validated,
 * as a batch route's body is: the cost is only its length.
 */
export function batchToolItems(req: FastifyRequest): unknown {
  if (req.method !== 'POST' || req.routeOptions.url !== MCP_PATH) return undefined;
  const call = req.body as ToolCall | undefined;
  if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string' || !BATCH_TOOLS.has(call.params.name)) return undefined;
  return call.params.arguments?.items;
}
