import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { NatsConnection } from 'nats';
import { EventSubscriptions } from './event-subscriptions';
import { MESSAGING_OPTIONS, MessagingOptions } from './messaging.options';
import { NATS_CONNECTION } from './nats';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxService } from './outbox/outbox.service';
import { RpcClient } from './rpc-client';
import { RpcServer } from './rpc-server';

export interface MessagingModuleOptions extends MessagingOptions {
  nc: NatsConnection;
  /** Services answer requests; the gateway only asks. */
  serveRpc: boolean;
}

/** NATS connection, RPC client and server, outbox and relay, for one process. */
@Module({})
export class MessagingModule {
  static forRoot({ nc, serveRpc, ...options }: MessagingModuleOptions): DynamicModule {
    return {
      module: MessagingModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: NATS_CONNECTION, useValue: nc },
        { provide: MESSAGING_OPTIONS, useValue: options },
        { provide: RpcClient, useFactory: () => new RpcClient(nc, options.namespace, options.rpcTimeoutMs) },
        OutboxService,
        OutboxRelay,
        EventSubscriptions,
        ...(serveRpc ? [RpcServer] : []),
      ],
      exports: [NATS_CONNECTION, MESSAGING_OPTIONS, RpcClient, OutboxService, OutboxRelay, EventSubscriptions],
    };
  }
}
