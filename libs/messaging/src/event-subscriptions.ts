import { DomainEvent, ServiceName } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { systemOrigin, withOrigin } from './changes/change-origin';
import { DeadEvents } from './dead-events/dead-events.service';
import { DurableEventConsumer } from './event-consumer';
import { MessagingMetrics } from './messaging.metrics';
import { MESSAGING_OPTIONS, MessagingOptions } from './messaging.options';
import { NATS_CONNECTION } from './nats';

export interface DurableSubscription {
  /** Durable consumer name (EventConsumer in libs/contracts); the stream remembers its progress. */
  durable: string;
  /** Event types to handle; all when omitted. */
  types?: string[];
  /** Idempotent handling of one batch, in one transaction; acknowledged only after it resolves. */
  handle: (events: DomainEvent[]) => Promise<void>;
  /**
   * The services that produce those events: after a stream reset (or at the consumer's first start) their
   * outboxes are handled before the consumer is made again on the stream (docs/operations.md, "Stream reset").
   */
  sources: readonly ServiceName[];
}

/**
 * Runs a service's durable event consumers for the life of the application: providers declare what
 * they consume (usually in their constructor) and this starts them once the app is up and stops them
 * on shutdown.
 */
@Injectable()
export class EventSubscriptions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly declared: DurableSubscription[] = [];
  private readonly running: DurableEventConsumer[] = [];

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
    private readonly deadEvents: DeadEvents,
    private readonly metrics: MessagingMetrics,
  ) {}

  /** Declares a durable consumer; an event it cannot handle is parked as dead under its durable name. */
  durable(subscription: DurableSubscription): void {
    // What a consumer changes in reaction to events (clean-ups) is the system's doing, named by the
    // consumer, also when an operator retries a parked event.
    const origin = systemOrigin(subscription.durable);
    const handle = (events: DomainEvent[]) => withOrigin(origin, () => subscription.handle(events));
    this.declared.push({ ...subscription, handle });
    this.deadEvents.register(subscription.durable, (event) => handle([event]));
  }

  onApplicationBootstrap(): void {
    for (const { durable, types, handle, sources } of this.declared) {
      const consumer = new DurableEventConsumer({
        nc: this.nc,
        namespace: this.options.namespace,
        durable,
        types,
        handle,
        park: (event, error, attempts) => this.deadEvents.park({ consumer: durable, event, error, attempts }),
        retry: this.deadEvents.policy,
        logger: this.options.logger,
        recovery: { services: sources, metrics: this.metrics },
      });
      consumer.start();
      this.metrics.trackLag(durable, () => consumer.lag());
      this.running.push(consumer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.running.map((c) => c.stop()));
  }
}
