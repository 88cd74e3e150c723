import { IdPrefix, newId, traceparentOf } from '@crm/common';
import { ChangeOrigin, DomainEvent, EventDraft, EventPayload, EventType } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { MESSAGING_OPTIONS, MessagingOptions } from '../messaging.options';
import { markRequestApplied } from '../outcomes/request-outcome';
import { ChangeDraft } from '../changes/change-drafts';
import { currentOrigin } from '../changes/change-origin';

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

  async append<T extends EventType>(manager: EntityManager, type: T, data: EventPayload<T>): Promise<DomainEvent<T>> {
    const [event] = await this.appendMany(manager, [{ type, data } as EventDraft]);
    return event as DomainEvent<T>;
  }

  /**
   * Records several events with one insert and one notification, in the order given: the relay
   * publishes them in that order.
   */
  async appendMany(manager: EntityManager, items: ReadonlyArray<EventDraft>): Promise<DomainEvent[]> {
    return (await this.record(manager, { events: items })).events;
  }

  /**
   * Records what one write did: its events and its change-history entries (docs/changes.md), in one
   * statement inside the write's transaction. Both carry the origin in scope (who, through which
   * channel, in which request) and the same instant. A null change (a no-op update) is skipped.
   */
  async record(manager: EntityManager, { events = [], changes = [] }: Recording): Promise<{ events: DomainEvent[]; changes: ChangeEntry[] }> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxService.record must run inside the transaction of the change it records');
    }
    const drafts = changes.filter((c): c is ChangeDraft => c !== null);
    if (!events.length && !drafts.length) return { events: [], changes: [] };
    // Every change a client can cause records something, so this is where a keyed request is marked applied.
    await markRequestApplied(manager);
    const origin = currentOrigin(this.options.service);
    const now = new Date();
    const occurredAt = now.toISOString();
    const stamped: DomainEvent[] = events.map(
      ({ type, data }) =>
        ({
          id: newId(IdPrefix.Event),
          type,
          occurred_at: occurredAt,
          actor: origin.actor,
          via: origin.via,
          request_id: origin.request_id,
          data,
        }) as DomainEvent,
    );
    const entries: ChangeEntry[] = drafts.map((draft) => ({ id: newId(IdPrefix.Change), ...draft, ...origin, occurred_at: occurredAt }));
    // The span that made the change (a request's, when tracing is on) is the parent of the publish. The
    // notification rides in the same statement (one round trip); PostgreSQL delivers it only when the
    // transaction commits, so the relay wakes exactly then.
    const parts: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    if (stamped.length) {
      const versions = this.versionSteps(stamped, parts, param);
      parts.push(`appended AS (
         INSERT INTO outbox (event_id, type, payload, trace_context)
         SELECT e.id, e.type, ${versions.payload('e')}, ${param(traceparentOf() ?? null)}
         FROM unnest(${param(stamped.map((e) => e.id))}::text[], ${param(stamped.map((e) => e.type))}::text[], ${param(stamped.map((e) => JSON.stringify(e)))}::jsonb[])
              WITH ORDINALITY AS e(id, type, payload, n) ${versions.joins('e')} ORDER BY e.n
       )`);
    }
    if (entries.length) {
      parts.push(`histories AS (
         INSERT INTO changes (id, object, record_id, action, changed, previous, current, actor_type, actor_id, via, request_id, occurred_at)
         SELECT c.id, c.object, c.record_id, c.action, ARRAY(SELECT jsonb_array_elements_text(c.changed)), c.previous, c.current,
                ${param(origin.actor.type)}, ${param(origin.actor.id)}, ${param(origin.via)}, ${param(origin.request_id)}, ${param(occurredAt)}::timestamptz
         FROM unnest(${param(entries.map((c) => c.id))}::text[], ${param(entries.map((c) => c.object))}::text[], ${param(entries.map((c) => c.record_id))}::text[],
                     ${param(entries.map((c) => c.action))}::text[], ${param(entries.map((c) => JSON.stringify(c.changed)))}::jsonb[],
                     ${param(entries.map((c) => (c.previous === null ? null : JSON.stringify(c.previous))))}::jsonb[],
                     ${param(entries.map((c) => (c.current === null ? null : JSON.stringify(c.current))))}::jsonb[])
              AS c(id, object, record_id, action, changed, previous, current)
       )`);
    }
    const notify = stamped.length ? `pg_notify(${param(outboxChannel(this.options.schema))}, '')` : 'NULL';
    await manager.query(`WITH ${parts.join(', ')} SELECT ${notify}`, params);
    return { events: stamped, changes: entries };
  }

  /**
   * The record versions of the handoff rule (docs/exports.md): each record of this service that the events
   * name gets a new version from the schema's `record_versions` sequence, drawn in this statement with the
   * row locked (so versions of one record follow the order its changes commit), and each event about it
   * carries that version as `data.version`. A record gone by now (deleted) has none: its event carries none.
   */
  private versionSteps(events: DomainEvent[], parts: string[], param: (value: unknown) => string) {
    const joins: string[] = [];
    const cases: string[] = [];
    (this.options.recordVersions ?? []).forEach((record, i) => {
      const ids = [...new Set(events.filter((e) => record.types.includes(e.type)).map((e) => (e.data as unknown as Record<string, unknown>)[record.id]))];
      const named = ids.filter((id): id is string => typeof id === 'string');
      if (!named.length) return;
      parts.push(`versioned_${i} AS (
         UPDATE ${record.table} SET version = nextval('record_versions') WHERE id = ANY(${param(named)}::text[]) RETURNING id, version
       )`);
      cases.push(`WHEN v${i}.version IS NOT NULL THEN jsonb_set(%.payload, '{data,version}', to_jsonb(v${i}.version))`);
      joins.push(`LEFT JOIN versioned_${i} v${i} ON %.type = ANY(${param(record.types)}::text[]) AND v${i}.id = %.payload->'data'->>${param(record.id)}`);
    });
    return {
      payload: (alias: string) => (cases.length ? `CASE ${cases.join(' ').replaceAll('%', alias)} ELSE ${alias}.payload END` : `${alias}.payload`),
      joins: (alias: string) => joins.join(' ').replaceAll('%', alias),
    };
  }
}

/** What one write records: its events, and its change entries (null where an update changed nothing). */
export interface Recording {
  events?: ReadonlyArray<EventDraft>;
  changes?: ReadonlyArray<ChangeDraft | null>;
}

/** A change entry as stored and served (ChangeView). */
export type ChangeEntry = ChangeDraft & ChangeOrigin & { id: string; occurred_at: string };
