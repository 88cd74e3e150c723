import { Module } from '@nestjs/common';
import { McpController } from './mcp.controller';
import { McpService } from './mcp.service';

/** POST /mcp: the operations the table exposes to agents, as MCP tools. */
@Module({ controllers: [McpController], providers: [McpService] })
export class McpModule {}
