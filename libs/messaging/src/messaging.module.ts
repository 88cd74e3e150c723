import { DynamicModule, Module } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { DeadEvents } from './dead-events/dead-events.service';
import { EventSubscriptions } from './event-subscriptions';
import { MessagingMetrics } from './messaging.metrics';
import { MESSAGING_OPTIONS, MessagingOptions } from './messaging.options';
import { NATS_CONNECTION } from './nats';
import { OutboxLedger } from './outbox/outbox-ledger';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxService } from './outbox/outbox.service';

export interface MessagingModuleOptions extends MessagingOptions {
  nc: NatsConnection;
}

/** NATS connection for JetStream, outbox and relay, event subscriptions, for one process. */
@Module({})
export class MessagingModule {
  static forRoot({ nc, ...options }: MessagingModuleOptions): DynamicModule {
    return {
      module: MessagingModule,
      global: true,
      providers: [
        { provide: NATS_CONNECTION, useValue: nc },
        { provide: MESSAGING_OPTIONS, useValue: options },
        OutboxService,
        OutboxRelay,
        OutboxLedger,
        EventSubscriptions,
        DeadEvents,
        MessagingMetrics,
      ],
      exports: [NATS_CONNECTION, MESSAGING_OPTIONS, OutboxService, OutboxRelay, EventSubscriptions, DeadEvents, MessagingMetrics],
    };
  }
}
