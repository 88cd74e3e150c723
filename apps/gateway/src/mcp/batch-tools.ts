import type { FastifyRequest } from 'fastify';
import { MCP_PATH } from '../http/access.hook';
import { BATCH_WRITES } from '../http/request-body';
import { hasBatch } from './objects';

/** The tool that runs an object's batch write. */
export const BATCH_TOOL = 'upsert_records';

/** Tools of one batch operation (write_line_items): their `items` are that route's. */
const OPERATION_BATCH_TOOLS: ReadonlySet<unknown> = new Set(BATCH_WRITES.flatMap((op) => (op.mcp ? [op.mcp.tool] : [])));

interface ToolCall {
  method?: unknown;
  params?: { name?: unknown; arguments?: { object?: unknown; items?: unknown } };
}

/**
 * The items of a POST /mcp that calls the batch tool on an object with a batch route, or a batch
 * operation's own tool: its `items` argument, which the tool passes on as the body's `items` of that route. Undefined for any other
 * request. Read before the call is validated, as a batch route's body is: the cost is only its length.
 */
export function batchToolItems(req: FastifyRequest): unknown {
  if (req.method !== 'POST' || req.routeOptions.url !== MCP_PATH) return undefined;
  const call = req.body as ToolCall | undefined;
  if (call?.method !== 'tools/call') return undefined;
  const name = call.params?.name;
  if (OPERATION_BATCH_TOOLS.has(name) || (name === BATCH_TOOL && hasBatch(call.params?.arguments?.object))) return call.params?.arguments?.items;
  return undefined;
}
