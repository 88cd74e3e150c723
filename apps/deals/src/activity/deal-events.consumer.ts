import { isId, IdPrefix } from '@crm/common';
import { DomainEvent, EventConsumer, EventType, ServiceName } from '@crm/contracts';
import { EventSubscriptions, systemOrigin, withOrigin } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ContactLinksService } from '../internal/contact-links.service';

const CONSUMED: string[] = [EventType.ActivityCreated, EventType.ActivityUpdated, EventType.ContactDeleted, EventType.CompanyDeleted];

/** The deals service following a deletion on its own: the changes it makes are the system's, named after the clean-up. */
const CONTACT_CLEANUP = systemOrigin('contact_cleanup');
const COMPANY_CLEANUP = systemOrigin('company_cleanup');

/**
 * Follows the contacts service: activity times feed last_activity_at (and so the stale-deal trigger),
 * deleted contacts and companies are unlinked, and deals of a merged contact follow it to the winner.
 * Each batch commits in one transaction before it is acknowledged, and every step is idempotent, so a
 * redelivered batch changes nothing twice.
 */
@Injectable()
export class DealEventsConsumer {
  constructor(
    private readonly dataSource: DataSource,
    private readonly links: ContactLinksService,
    subscriptions: EventSubscriptions,
  ) {
    subscriptions.durable({ durable: EventConsumer.Deals, types: CONSUMED, sources: [ServiceName.Contacts], handle: (events) => this.handle(events) });
  }

  async handle(events: DomainEvent[]): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      for (const event of events) {
        switch (event.type) {
          case EventType.ActivityCreated:
          case EventType.ActivityUpdated: {
            const data = event.data;
            const occurredAt = new Date(data.occurred_at);
            if (!isId(data.deal_id, IdPrefix.Deal) || Number.isNaN(occurredAt.getTime())) break;
            await this.links.recordActivity(m, data.deal_id, occurredAt);
            break;
          }
          case EventType.ContactDeleted: {
            const data = event.data;
            if (typeof data.contact_id !== 'string') break;
            // A merge moved the loser's deals before it deleted the loser; this moves any deal linked to
            // the loser since (a no-op otherwise), so no deal is left pointing at a merged contact.
            const mergedInto = data.merged_into;
            await withOrigin(CONTACT_CLEANUP, () =>
              typeof mergedInto === 'string' ? this.links.relinkContact(m, data.contact_id, mergedInto) : this.links.unlinkContact(m, data.contact_id),
            );
            break;
          }
          case EventType.CompanyDeleted: {
            const data = event.data;
            if (typeof data.company_id !== 'string') break;
            await withOrigin(COMPANY_CLEANUP, () => this.links.unlinkCompany(m, data.company_id));
            break;
          }
          default:
            break;
        }
      }
    });
  }
}
