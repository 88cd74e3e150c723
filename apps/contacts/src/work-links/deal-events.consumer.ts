import { IdPrefix, isId } from '@crm/common';
import { DomainEvent, EventConsumer, EventType, ServiceName } from '@crm/contracts';
import { EventSubscriptions, systemOrigin, withOrigin } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WorkLinks } from './work-links.service';

/**
 * Follows deal.deleted from the deals service: activities and tasks of the deal lose it, or go with it
 * when no contact holds them either. A batch commits in one transaction before it is acknowledged.
 */
@Injectable()
export class DealEventsConsumer {
  constructor(
    private readonly dataSource: DataSource,
    private readonly links: WorkLinks,
    subscriptions: EventSubscriptions,
  ) {
    subscriptions.durable({
      durable: EventConsumer.Contacts,
      types: [EventType.DealDeleted],
      sources: [ServiceName.Deals],
      handle: (events) => this.handle(events),
    });
  }

  async handle(events: DomainEvent[]): Promise<void> {
    const dealIds = events
      .filter((e): e is DomainEvent<typeof EventType.DealDeleted> => e.type === EventType.DealDeleted)
      .map((e) => e.data.deal_id)
      .filter((id): id is string => isId(id, IdPrefix.Deal));
    if (!dealIds.length) return;
    // A clean-up the service does on its own: its entries name this consumer as the actor.
    await withOrigin(systemOrigin(EventConsumer.Contacts), () =>
      this.dataSource.transaction(async (m) => {
        for (const dealId of dealIds) await this.links.detach(m, 'deal_id', dealId);
      }),
    );
  }
}
