import { IdPrefix, newId, traceparentOf } from '@crm/common';
import { DomainEvent, EventType } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { markRequestApplied } from '../outcomes/request-outcome';

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
    const [event] = await this.appendMany<D>(manager, [{ type, data }]);
    return event;
  }

  /**
   * Records several events with one insert and one notification, in the order given: the relay
   * publishes them in that order.
   */
  async appendMany<D extends object>(manager: EntityManager, items: ReadonlyArray<{ type: EventType; data: D }>): Promise<DomainEvent<D>[]> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxService.append must run inside the transaction of the change it records');
    }
    if (!items.length) return [];
    // Every change a client can cause records an event, so this is where a keyed request is marked applied.
    await markRequestApplied(manager);
    const occurredAt = new Date().toISOString();
    const events: DomainEvent<D>[] = items.map(({ type, data }) => ({ id: newId(IdPrefix.Event), type, occurred_at: occurredAt, data }));
    // The span that made the change (a request's, when tracing is on) is the parent of the publish. The
    // notification rides in the same statement (one round trip); PostgreSQL delivers it only when the
    // transaction commits, so the relay wakes exactly then.
    await manager.query(
      `WITH appended AS (
         INSERT INTO outbox (event_id, type, payload, trace_context)
         SELECT e.id, e.type, e.payload, $4 FROM unnest($1::text[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS e(id, type, payload, n) ORDER BY e.n
       )
       SELECT pg_notify($5, '')`,
      [events.map((e) => e.id), events.map((e) => e.type), events.map((e) => JSON.stringify(e)), traceparentOf() ?? null, outboxChannel(this.options.schema)],
    );
    return events;
  }
}
