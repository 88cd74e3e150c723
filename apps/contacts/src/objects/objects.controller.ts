import { SortablePageQuery } from '@crm/common';
import {
  BatchWriteDto,
  CreateObjectTypeDto,
  FieldDefinitionDto,
  ListObjectTypesQuery,
  ObjectRecordInputDto,
  Ops,
  RequestContext,
  UpdateFieldDefinitionDto,
  UpdateObjectRecordDto,
  UpdateObjectTypeDto,
} from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';

@Controller()
export class ObjectTypesController {
  constructor(private readonly types: ObjectTypesService) {}

  @Handles(Ops.objects.create)
  async create(@Payload('body') body: CreateObjectTypeDto) {
    return { data: await this.types.create(body) };
  }

  @Handles(Ops.objects.list)
  list(@Payload('query') query: ListObjectTypesQuery) {
    return this.types.list(query);
  }

  @Handles(Ops.objects.get)
  async get(@Payload('params') { slug }: { slug: string }) {
    return { data: await this.types.view(slug) };
  }

  @Handles(Ops.objects.update)
  async update(@Payload('params') { slug }: { slug: string }, @Payload('body') body: UpdateObjectTypeDto) {
    return { data: await this.types.update(slug, body) };
  }

  @Handles(Ops.objects.addField)
  async addField(@Payload('params') { slug }: { slug: string }, @Payload('body') body: FieldDefinitionDto) {
    return { data: await this.types.addField(slug, body) };
  }

  @Handles(Ops.objects.updateField)
  async updateField(@Payload('params') { slug, name }: { slug: string; name: string }, @Payload('body') body: UpdateFieldDefinitionDto) {
    return { data: await this.types.updateField(slug, name, body) };
  }

  @Handles(Ops.objects.removeField)
  async removeField(@Payload('params') { slug, name }: { slug: string; name: string }) {
    return { data: await this.types.removeField(slug, name) };
  }
}

@Controller()
export class ObjectRecordsController {
  constructor(private readonly records: ObjectRecordsService) {}

  @Handles(Ops.objects.createRecord)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') body: ObjectRecordInputDto) {
    return this.records.create(ctx, slug, body);
  }

  @Handles(Ops.objects.batchRecords)
  batch(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') body: BatchWriteDto) {
    return this.records.batch(ctx, slug, body);
  }

  @Handles(Ops.objects.listRecords)
  list(@Payload('params') { slug }: { slug: string }, @Payload('query') query: SortablePageQuery) {
    return this.records.list(slug, query);
  }

  @Handles(Ops.objects.getRecord)
  async get(@Payload('params') { slug, id }: { slug: string; id: string }) {
    return { data: await this.records.get(slug, id) };
  }

  @Handles(Ops.objects.updateRecord)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { slug, id }: { slug: string; id: string },
    @Payload('body') body: UpdateObjectRecordDto,
  ) {
    return this.records.update(ctx, slug, id, body);
  }

  @Handles(Ops.objects.removeRecord)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug, id }: { slug: string; id: string }) {
    await this.records.remove(ctx, slug, id);
  }
}
