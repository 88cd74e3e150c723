import { InputPipe, PageQuery } from '@crm/common';
import { CreateObjectTypeDto, FieldDefinitionDto, ListObjectTypesQuery, ObjectRecordInputDto, ObjectRecordsRpc, ObjectTypesRpc, RequestContext, UpdateFieldDefinitionDto, UpdateObjectRecordDto, UpdateObjectTypeDto } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ObjectRecordsService } from './object-records.service';
import { ObjectTypesService } from './object-types.service';

@Controller()
export class ObjectTypesController {
  constructor(private readonly types: ObjectTypesService) {}

  @MessagePattern(ObjectTypesRpc.Create)
  async create(@Payload('body', new InputPipe(CreateObjectTypeDto)) body: CreateObjectTypeDto) {
    return { data: await this.types.create(body) };
  }

  @MessagePattern(ObjectTypesRpc.List)
  list(@Payload('query', new InputPipe(ListObjectTypesQuery, 'query')) query: ListObjectTypesQuery) {
    return this.types.list(query);
  }

  @MessagePattern(ObjectTypesRpc.Get)
  async get(@Payload('params') { slug }: { slug: string }) {
    return { data: await this.types.view(slug) };
  }

  @MessagePattern(ObjectTypesRpc.Update)
  async update(
    @Payload('params') { slug }: { slug: string },
    @Payload('body', new InputPipe(UpdateObjectTypeDto)) body: UpdateObjectTypeDto,
  ) {
    return { data: await this.types.update(slug, body) };
  }

  @MessagePattern(ObjectTypesRpc.AddField)
  async addField(
    @Payload('params') { slug }: { slug: string },
    @Payload('body', new InputPipe(FieldDefinitionDto)) body: FieldDefinitionDto,
  ) {
    return { data: await this.types.addField(slug, body) };
  }

  @MessagePattern(ObjectTypesRpc.UpdateField)
  async updateField(
    @Payload('params') { slug, name }: { slug: string; name: string },
    @Payload('body', new InputPipe(UpdateFieldDefinitionDto)) body: UpdateFieldDefinitionDto,
  ) {
    return { data: await this.types.updateField(slug, name, body) };
  }

  @MessagePattern(ObjectTypesRpc.RemoveField)
  async removeField(@Payload('params') { slug, name }: { slug: string; name: string }) {
    return { data: await this.types.removeField(slug, name) };
  }
}

@Controller()
export class ObjectRecordsController {
  constructor(private readonly records: ObjectRecordsService) {}

  @MessagePattern(ObjectRecordsRpc.Create)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { slug }: { slug: string },
    @Payload('body', new InputPipe(ObjectRecordInputDto)) body: ObjectRecordInputDto,
  ) {
    return this.records.create(ctx, slug, body);
  }

  @MessagePattern(ObjectRecordsRpc.List)
  list(
    @Payload('params') { slug }: { slug: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.records.list(slug, query);
  }

  @MessagePattern(ObjectRecordsRpc.Get)
  async get(@Payload('params') { slug, id }: { slug: string; id: string }) {
    return { data: await this.records.get(slug, id) };
  }

  @MessagePattern(ObjectRecordsRpc.Update)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { slug, id }: { slug: string; id: string },
    @Payload('body', new InputPipe(UpdateObjectRecordDto)) body: UpdateObjectRecordDto,
  ) {
    return this.records.update(ctx, slug, id, body);
  }

  @MessagePattern(ObjectRecordsRpc.Delete)
  async remove(@Payload('params') { slug, id }: { slug: string; id: string }) {
    await this.records.remove(slug, id);
  }
}
