import { Controller, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GatewayRequest } from '../http/request-context';
import { McpService } from './mcp.service';
import { Scopes } from '../http/scopes';
import { ApiMcp } from '../openapi/api-docs.decorators';

/**
 * POST /mcp: Model Context Protocol over Streamable HTTP, stateless. Each request is authenticated and
 * rate limited like any other (it passes the same access hook), then answered by a server built
 * for the caller's key, with JSON responses rather than an event stream. A request carries one
 * JSON-RPC message, so one tool call: batches, which MCP dropped in its 2025-06-18 revision, would run
 * up to the SDK's 100 calls for the one token the request spends.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly mcp: McpService) {}

  @Post()
  @Scopes('any-key')
  @ApiMcp()
  async handle(@Req() req: GatewayRequest, @Res() reply: FastifyReply): Promise<void> {
    if (Array.isArray(req.body)) {
      const { ErrorCode } = await import('@modelcontextprotocol/sdk/types.js');
      const error = { code: ErrorCode.InvalidRequest, message: 'Invalid Request: JSON-RPC batches are not supported; send one JSON-RPC message per request.' };
      await reply.code(400).send({ jsonrpc: '2.0', id: null, error });
      return;
    }
    const server = await this.mcp.serverFor(req);
    // Memory: the MCP SDK's HTTP transport (and the Hono server adapter under it) loads on the first /mcp request.
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the raw response itself: the headers set so far (rate limit) go with it.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  }
}
