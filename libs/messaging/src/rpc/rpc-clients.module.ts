import { DynamicModule, Module, Type } from '@nestjs/common';
import { ClientProxy, ClientsModule } from '@nestjs/microservices';
import { CRM_RPC, CrmNatsClient, CrmNatsClientOptions } from './crm-nats.client';
import { RpcCaller } from './rpc-caller';

/**
 * The process's one ClientProxy to the services (CRM_RPC) and the typed RpcCaller over it. Registered once
 * by the process's root module, like the database connection: one NATS connection per process, which every
 * feature module's callers share.
 */
@Module({})
export class RpcClientsModule {
  static forRoot(options: CrmNatsClientOptions): DynamicModule {
    return {
      module: RpcClientsModule,
      global: true,
      imports: [ClientsModule.register({ clients: [{ name: CRM_RPC, customClass: CrmNatsClient as unknown as Type<ClientProxy>, options }] })],
      providers: [RpcCaller],
      exports: [ClientsModule, RpcCaller],
    };
  }
}
