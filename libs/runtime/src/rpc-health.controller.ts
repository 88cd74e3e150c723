import { healthCheck, RpcServiceName } from '@crm/contracts';
import { Controller, Type } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';

/**
 * The `<service>.health` request the gateway's /health sends: answered by the service's own RPC server,
 * so "up" means a replica is subscribed and handling requests, not merely that the process runs.
 */
export function rpcHealthController(service: RpcServiceName): Type {
  @Controller()
  class RpcHealthController {
    @MessagePattern(healthCheck(service).name)
    ping() {
      return { status: 'up' as const, service };
    }
  }
  return RpcHealthController;
}
