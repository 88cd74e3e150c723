import { IdPrefix, newId } from '@crm/common';
import { DomainEvent, EventType } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';

export function outboxChannel(schema: string): string {
  return `outbox_${schema}`;
}

/**
 * Records domain events inside the caller's transaction. Nothing is published here: the relay
 * publishes only what committed, so a rolled-back change never produces an event and a committed
 * one always does.
 */
@Injectable()
export class OutboxService {
  constructor(@Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions) {}

  async append<D extends object>(manager: EntityManager, type: EventType, data: D): Promise<DomainEvent<D>> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxService.append must run inside the transaction of the change it records');
    }
    const event: DomainEvent<D> = { id: newId(IdPrefix.Event), type, occurred_at: new Date().toISOString(), data };
    await manager.query(`INSERT INTO outbox (event_id, type, payload) VALUES ($1, $2, $3)`, [event.id, type, JSON.stringify(event)]);
    // Delivered by PostgreSQL only when the transaction commits: the relay wakes exactly then.
    await manager.query(`SELECT pg_notify($1, '')`, [outboxChannel(this.options.schema)]);
    return event;
  }
}
