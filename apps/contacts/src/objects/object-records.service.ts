import { CursorCodec, DomainError, ErrorCode, IdPrefix, isId, keysetPage, newId, Page, SortablePageQuery } from '@crm/common';
import {
  BatchReply,
  BatchWriteDto,
  builtInObject,
  EventType,
  ObjectRecordInputDto,
  ObjectRecordView,
  RequestContext,
  UpdateObjectRecordDto,
  ValidationWarning,
  event,
} from '@crm/contracts';
import { createdChange, deletedChange, OutboxService } from '@crm/messaging';
import { BatchRunner, withoutNulls } from '@crm/runtime';
import { ObjectRecordsBatchWriter, recordValueChanges, valuesChange } from './object-records.batch';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '../shared/sql';
import { archivedObject, ContactsFieldReferences } from './contacts-field-references';
import { ObjectRecord, ObjectType } from './object-type.entity';
import { presentRecord } from './object-type.presenter';
import { ObjectTypesService } from './object-types.service';

const LIST = 'object_records';

interface RecordWrite {
  record: ObjectRecord;
  type: ObjectType;
  warnings: ValidationWarning[];
}

/** `{data}`, plus `warnings` when a soft-enforced write broke a field definition. */
export interface RecordResponse {
  data: ObjectRecordView;
  warnings?: ValidationWarning[];
}

function presentWrite({ record, type, warnings }: RecordWrite): RecordResponse {
  const data = presentRecord(record, type);
  return warnings.length ? { data, warnings } : { data };
}

export function builtInRecords(slug: string): DomainError {
  return new DomainError(ErrorCode.NotFound, `'${slug}' is a built-in object: its records are served at /${slug}, not /objects/${slug}/records.`);
}

@Injectable()
export class ObjectRecordsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly types: ObjectTypesService,
    private readonly enforcer: ContactsFieldReferences,
    private readonly batches: BatchRunner,
  ) {}

  async create(ctx: RequestContext, slug: string, dto: ObjectRecordInputDto): Promise<RecordResponse> {
    return presentWrite(await this.insert(ctx, slug, dto));
  }

  private async insert(ctx: RequestContext, slug: string, dto: ObjectRecordInputDto): Promise<RecordWrite> {
    return this.dataSource.transaction(async (m) => {
      // A share lock: the type cannot be archived or gain fields while this write checks against it.
      const type = await this.writableType(m, slug);
      const id = newId(IdPrefix.ObjectRecord);
      const values = withoutNulls(dto.values);
      const warnings = await this.enforcer.enforce(m, ctx, this.target(type), {
        values: dto.values,
        stored: values,
        partial: false,
        store: { table: 'object_records', column: '"values"', recordId: id, scope: { column: 'object_type_id', value: type.id } },
        path: 'values',
      });
      await m.insert(ObjectRecord, { id, objectTypeId: type.id, values } as QueryDeepPartialEntity<ObjectRecord>);
      await this.outbox.record(m, {
        events: [event(EventType.ObjectRecordCreated, { record_id: id, object_type_id: type.id, object: type.slug })],
        changes: [createdChange(type.slug, id, { values })],
      });
      return { record: await m.findOneByOrFail(ObjectRecord, { id }), type, warnings };
    });
  }

  async list(slug: string, query: SortablePageQuery): Promise<Page<ObjectRecordView>> {
    const type = await this.readableType(this.dataSource.manager, slug);
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(ObjectRecord), 'r', `${LIST}:${type.id}`, query);
    qb.andWhere('r.object_type_id = :typeId', { typeId: type.id });
    return read((r) => presentRecord(r, type));
  }

  async get(slug: string, id: string): Promise<ObjectRecordView> {
    const type = await this.readableType(this.dataSource.manager, slug);
    return presentRecord(await this.findRecord(this.dataSource.manager, type, id), type);
  }

  /** Merges the sent values into the record (null removes a key) and checks only what was sent. */
  async update(ctx: RequestContext, slug: string, id: string, dto: UpdateObjectRecordDto): Promise<RecordResponse> {
    return presentWrite(await this.applyUpdate(ctx, slug, id, dto));
  }

  private async applyUpdate(ctx: RequestContext, slug: string, id: string, dto: UpdateObjectRecordDto): Promise<RecordWrite> {
    return this.dataSource.transaction(async (m) => {
      const type = await this.writableType(m, slug);
      const record = await this.findRecord(m, type, id, true);
      const sent = dto.values ?? {};
      const values = withoutNulls({ ...record.values, ...sent });
      const warnings = await this.enforcer.enforce(m, ctx, this.target(type), {
        values: sent,
        stored: values,
        partial: true,
        store: { table: 'object_records', column: '"values"', recordId: id, scope: { column: 'object_type_id', value: type.id } },
        path: 'values',
      });
      const changes = recordValueChanges(record.values, sent);
      if (!changes.changed.length) return { record, type, warnings };
      await m.update(ObjectRecord, { id }, { values, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectRecord>);
      await this.outbox.record(m, {
        events: [event(EventType.ObjectRecordUpdated, { record_id: id, object_type_id: type.id, object: type.slug, ...changes })],
        changes: [valuesChange(type.slug, id, changes)],
      });
      return { record: await m.findOneByOrFail(ObjectRecord, { id }), type, warnings };
    });
  }

  async remove(slug: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const type = await this.writableType(m, slug);
      const record = await this.findRecord(m, type, id, true);
      await m.delete(ObjectRecord, { id });
      await this.outbox.record(m, {
        events: [event(EventType.ObjectRecordDeleted, { record_id: id, object_type_id: type.id, object: type.slug })],
        changes: [deletedChange(type.slug, id, { values: record.values })],
      });
    });
  }

  /** POST /objects/:slug/records/batch (docs/batch.md). */
  async batch(ctx: RequestContext, slug: string, dto: BatchWriteDto): Promise<BatchReply<ObjectRecordView>> {
    const writer = new ObjectRecordsBatchWriter(
      slug,
      (m) => this.writableType(m, slug),
      (m) => this.readableType(m, slug),
      this.enforcer,
    );
    // An unknown or built-in slug is the whole request's 404, before any item is looked at.
    await this.readableType(this.dataSource.manager, slug);
    return this.batches.run(ctx, dto, writer);
  }

  private target(type: ObjectType) {
    return { slug: type.slug, level: type.enforcementLevel, fields: type.fields };
  }

  private async readableType(m: EntityManager, slug: string): Promise<ObjectType> {
    if (builtInObject(slug)) throw builtInRecords(slug);
    return this.types.find(m, slug);
  }

  private async writableType(m: EntityManager, slug: string): Promise<ObjectType> {
    if (builtInObject(slug)) throw builtInRecords(slug);
    const type = await this.types.find(m, slug, 'share');
    if (type.status === 'archived') throw archivedObject(type.slug);
    return type;
  }

  private async findRecord(m: EntityManager, type: ObjectType, id: string, lock = false): Promise<ObjectRecord> {
    if (!isId(id, IdPrefix.ObjectRecord)) throw DomainError.notFound(`${type.slug} record`, id);
    const record = await m.findOne(ObjectRecord, { where: { id, objectTypeId: type.id }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
    if (!record) throw DomainError.notFound(`${type.slug} record`, id);
    return record;
  }
}
