import { builtInEntry, ObjectService, Ops, RecordChangesQuery, SlugKeptBy, SlugWith, slugsWith } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { ChangeLog } from '../changes/change-log';

/** The objects with a history service `S` keeps. */
export type HistoryKeptBy<S extends ObjectService> = SlugWith<'history'> & SlugKeptBy<S>;

/**
 * `GET /<slug>/:id/changes` (docs/changes.md) of every object with a history that `service` keeps, read from
 * the registry: the record's entries, or 404 when it never existed and left none. Each object's records are
 * in the table its slug names.
 */
export function recordChangesController<S extends ObjectService>(service: S) {
  @Controller()
  class RecordChangesController {
    @Inject(ChangeLog) readonly log!: ChangeLog;
    @Inject(DataSource) readonly dataSource!: DataSource;

    forRecord(object: HistoryKeptBy<S>, id: string, query: RecordChangesQuery) {
      const exists = async () => (await this.dataSource.query(`SELECT 1 FROM ${object} WHERE id = $1`, [id])).length > 0;
      return this.log.forRecord(object, id, query, exists, builtInEntry(object)!.one);
    }
  }

  const proto = RecordChangesController.prototype as unknown as Record<string, unknown>;
  for (const object of slugsWith('history', service) as Array<HistoryKeptBy<S>>) {
    const op = Ops[object].changes;
    const key = op.name;
    Object.defineProperty(proto, key, {
      value: function (this: RecordChangesController, { id }: { id: string }, query: RecordChangesQuery) {
        return this.forRecord(object, id, query);
      },
      writable: true,
      configurable: true,
    });
    Payload('params')(proto, key, 0);
    Payload('query')(proto, key, 1);
    Handles(op)(proto, key, Object.getOwnPropertyDescriptor(proto, key)!);
  }
  return RecordChangesController;
}
