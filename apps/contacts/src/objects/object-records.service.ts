import { CursorCodec, DomainError, ErrorCode, IdPrefix, isId, keysetPage, Page, SortablePageQuery } from '@crm/common';
import {
  BatchReply,
  BatchWriteDto,
  builtInObject,
  ObjectRecordInputDto,
  ObjectRecordView,
  RequestContext,
  UpdateObjectRecordDto,
  ValidationWarning,
} from '@crm/contracts';
import { BatchRunner } from '@crm/records';
import { ObjectRecordsBatchWriter } from './object-records.batch';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { archivedObject, ContactsFieldReferences } from './contacts-field-references';
import { ObjectRecord, ObjectType } from './object-type.entity';
import { presentRecord } from './object-type.presenter';
import { ObjectTypesService } from './object-types.service';

const LIST = 'object_records';

/** `{data}`, plus `warnings` when a soft-enforced write broke a field definition. */
export interface RecordResponse {
  data: ObjectRecordView;
  warnings?: ValidationWarning[];
}

function answer({ data, warnings }: { data: ObjectRecordView; warnings: ValidationWarning[] }): RecordResponse {
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
    private readonly types: ObjectTypesService,
    private readonly enforcer: ContactsFieldReferences,
    private readonly batches: BatchRunner,
  ) {}

  /** A single write is a batch of one through the object's writer: the rules of its values exist once. */
  async create(ctx: RequestContext, slug: string, dto: ObjectRecordInputDto): Promise<RecordResponse> {
    return answer(await this.batches.oneWithWarnings(ctx, this.writer(slug), { create: [{ index: 0, body: dto }] }));
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
    return answer(await this.batches.oneWithWarnings(ctx, this.writer(slug), { update: [{ index: 0, id, body: dto }] }));
  }

  async remove(ctx: RequestContext, slug: string, id: string): Promise<void> {
    await this.batches.one(ctx, this.writer(slug), { remove: [{ index: 0, id }] });
  }

  /** POST /objects/:slug/records/batch (docs/batch.md). */
  async batch(ctx: RequestContext, slug: string, dto: BatchWriteDto): Promise<BatchReply<ObjectRecordView>> {
    // An unknown or built-in slug is the whole request's 404, before any item is looked at.
    await this.readableType(this.dataSource.manager, slug);
    return this.batches.run(ctx, dto, this.writer(slug));
  }

  private writer(slug: string): ObjectRecordsBatchWriter {
    return new ObjectRecordsBatchWriter(
      slug,
      (m) => this.writableType(m, slug),
      (m) => this.readableType(m, slug),
      this.enforcer,
    );
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
