import { healthCheck, RpcServiceName } from '@crm/contracts';
import { outboxBacklog } from '@crm/messaging';
import { Controller, Type } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { DataSource } from 'typeorm';

/**
 * The `<service>.health` request the gateway's /health sends: answered by the service's own RPC server,
 * so "up" means a replica is subscribed and handling requests, not merely that the process runs. The
 * answer carries the replica's view of the service's outbox backlog, which the gateway lists under it.
 */
export function rpcHealthController(service: RpcServiceName): Type {
  @Controller()
  class RpcHealthController {
    constructor(private readonly dataSource: DataSource) {}

    @MessagePattern(healthCheck(service).name)
    async ping() {
      // Unreadable, the backlog is left out: the replica still answers, and its own /health says why.
      const outbox = await outboxBacklog(this.dataSource).catch(() => undefined);
      return { status: 'up' as const, service, ...(outbox && { outbox }) };
    }
  }
  return RpcHealthController;
}
