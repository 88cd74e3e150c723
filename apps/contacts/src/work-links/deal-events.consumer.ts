import { IdPrefix, isId, Logger } from '@crm/common';
import { DomainEvent, EventConsumer, EventType } from '@crm/contracts';
import { DurableEventConsumer, MESSAGING_OPTIONS, MessagingOptions, NATS_CONNECTION } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { WorkLinks } from './work-links.service';

/**
 * Follows deal.deleted from the deals service: activities and tasks of the deal lose it, or go with it
 * when no contact holds them either. A batch commits in one transaction before it is acknowledged.
 */
@Injectable()
export class DealEventsConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private consumer?: DurableEventConsumer;

  constructor(
    private readonly dataSource: DataSource,
    private readonly links: WorkLinks,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.consumer = new DurableEventConsumer({
      nc: this.nc,
      namespace: this.options.namespace,
      durable: EventConsumer.Contacts,
      // No subject filter: the broker in use predates multi-subject filters; other types are skipped here.
      logger: this.logger,
      handle: (events) => this.handle(events),
    });
    this.consumer.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  async handle(events: DomainEvent[]): Promise<void> {
    const dealIds = events
      .filter((e) => e.type === EventType.DealDeleted)
      .map((e) => (e.data as { deal_id?: unknown }).deal_id)
      .filter((id): id is string => isId(id, IdPrefix.Deal));
    if (!dealIds.length) return;
    await this.dataSource.transaction(async (m) => {
      for (const dealId of dealIds) await this.links.detach(m, 'deal_id', dealId);
    });
  }
}
