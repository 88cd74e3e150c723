import { ErasureStepReply, ErasureTarget, Ops } from '@crm/contracts';
import { MESSAGING_OPTIONS, MessagingMetrics, MessagingOptions, NATS_CONNECTION } from '@crm/messaging';
import {
  catchUpStreamCopy,
  COMMON_ERASURE_STORES,
  ErasureDeclaration,
  ErasureRuns,
  ErasureStore,
  Handles,
  ledgered,
  redactingStore,
  runErasureStores,
  toRanges,
} from '@crm/runtime';
import { Controller, Inject, Module } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { EVENT_LOG_CONSUMER } from '../log/event-log.writer';
import { eraseFromStream } from './stream-erasure';

/**
 * Exports that copy contacts (docs/exports.md): a file cannot be redacted in place without breaking its
 * manifest, so every such export is deleted with its files (a run in progress stops); the client starts a
 * new one, which no longer holds the person.
 */
const exportsStore: ErasureStore = {
  name: 'exports',
  tables: ['exports', 'export_pieces'],
  async erase(m) {
    const [, deleted] = (await m.query(`DELETE FROM exports WHERE 'contacts' = ANY(objects) RETURNING id`)) as [unknown[], number];
    return { deleted, redacted: 0 };
  },
};

/**
 * The event log's part of an erasure: the contact's own events are blanked in place (position, id, type
 * and time stay; `data.redacted` is true), other events naming the person lose those values.
 */
export const eventsErasureDeclaration: ErasureDeclaration = {
  service: 'events',
  stores: [
    redactingStore('log', {
      table: 'events',
      key: 'position',
      keyType: 'bigint',
      columns: { data: 'jsonb' },
      owned: `r.type LIKE 'contact.%' AND r.data->>'contact_id' = $2`,
      done: `coalesce((r.data->>'redacted')::boolean, false)`,
    }),
    exportsStore,
    ...COMMON_ERASURE_STORES,
  ],
  noPersonalData: { log_checkpoint: 'a stream sequence' },
  streamCopy: { consumer: EVENT_LOG_CONSUMER, checkpointTable: 'log_checkpoint' },
};

@Controller()
export class EventsErasureController {
  private readonly runs = new ErasureRuns();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
    private readonly metrics: MessagingMetrics,
  ) {}

  /**
   * Once the log holds what the stream held when asked: the log and this service's stores, then the stream's
   * messages of the events the log redacted.
   */
  @Handles(Ops.privacyInternal.events)
  step(@Payload('body') target: ErasureTarget): Promise<ErasureStepReply> {
    return this.runs.run(target, () => this.erase(target));
  }

  private async erase(target: ErasureTarget): Promise<ErasureStepReply> {
    const deps = { dataSource: this.dataSource, nc: this.nc, messaging: this.messaging, metrics: this.metrics };
    await catchUpStreamCopy(eventsErasureDeclaration.streamCopy!, deps);
    const { stores, positions } = await runErasureStores(this.dataSource, eventsErasureDeclaration, target);
    const touched = positions.log ?? [];
    const events: Array<{ id: string; occurred_at: Date }> = touched.length
      ? await this.dataSource.query(`SELECT id, occurred_at FROM events WHERE position = ANY($1::bigint[])`, [touched])
      : [];
    const since = events.length ? new Date(Math.min(...events.map((e) => new Date(e.occurred_at).getTime()))) : undefined;
    // Once per erasure (the ledger): asked again, it answers the sequences it removed the first time.
    const stream = await ledgered(this.dataSource, target.erasure_id, 'stream', async () => {
      const removed = await eraseFromStream(this.nc, this.messaging.namespace, new Set(events.map((e) => e.id)), since, target.needles);
      return { deleted: removed.length, redacted: 0, positions: removed.map(String) };
    });
    return {
      stores: [...stores, { store: 'events.stream', deleted: stream.deleted, redacted: 0 }],
      event_log_ranges: toRanges(touched),
      stream_ranges: toRanges(stream.positions ?? []),
    };
  }
}

@Module({ controllers: [EventsErasureController] })
export class EventsErasureModule {}
