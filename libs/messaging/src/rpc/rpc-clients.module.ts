import { DynamicModule, Type } from '@nestjs/common';
import { ClientProxy, ClientsModule } from '@nestjs/microservices';
import { CRM_RPC, CrmNatsClient, CrmNatsClientOptions } from './crm-nats.client';

/** Registers the process's one ClientProxy to the services under CRM_RPC, visible to every module. */
export function crmRpcClients(options: CrmNatsClientOptions): DynamicModule {
  return ClientsModule.register({ isGlobal: true, clients: [{ name: CRM_RPC, customClass: CrmNatsClient as unknown as Type<ClientProxy>, options }] });
}
