import { Controller, Post, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { GatewayRequest } from '../http/request-context';
import { McpService } from './mcp.service';
import { Scopes } from '../http/scopes';
import { ApiMcp } from '../openapi/api-docs.decorators';

/**
 * POST /mcp: Model Context Protocol over Streamable HTTP, stateless. Each request is authenticated and
 * rate limited like any other (it passes the same access middleware), then answered by a server built
 * for the caller's key, with JSON responses rather than an event stream.
 */
@Controller('mcp')
export class McpController {
  constructor(private readonly mcp: McpService) {}

  @Post()
  @Scopes('any-key')
  @ApiMcp()
  async handle(@Req() req: GatewayRequest, @Res() res: Response): Promise<void> {
    const server = await this.mcp.serverFor(req);
    // Memory: the MCP SDK's HTTP transport (and the Hono server adapter under it) loads on the first /mcp request.
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }
}
