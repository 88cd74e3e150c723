import { InputPipe, PageQuery } from '@crm/common';
import { CreateObjectTypeDto, FieldDefinitionDto, ListObjectTypesQuery, ObjectRecordInputDto, ObjectRecordsRpc, ObjectTypesRpc, RequestContext, UpdateObjectRecordDto, UpdateObjectTypeDto, ValidationWarning } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ObjectRecordsService, RecordWrite } from './object-records.service';
import { presentObjectType, presentRecord } from './object-type.presenter';
import { ObjectTypesService } from './object-types.service';

/** `{data}`, plus `warnings` when a soft-enforced write broke a field definition. */
function withWarnings<T>(data: T, warnings: ValidationWarning[]): { data: T; warnings?: ValidationWarning[] } {
  return warnings.length ? { data, warnings } : { data };
}

function presentWrite({ record, type, warnings }: RecordWrite) {
  return withWarnings(presentRecord(record, type), warnings);
}

@Controller()
export class ObjectTypesController {
  constructor(private readonly types: ObjectTypesService) {}

  @MessagePattern(ObjectTypesRpc.Create)
  async create(@Payload('body', new InputPipe(CreateObjectTypeDto)) body: CreateObjectTypeDto) {
    return { data: presentObjectType(await this.types.create(body)) };
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
    return presentWrite(await this.records.create(ctx, slug, body));
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
    const { record, type } = await this.records.get(slug, id);
    return { data: presentRecord(record, type) };
  }

  @MessagePattern(ObjectRecordsRpc.Update)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { slug, id }: { slug: string; id: string },
    @Payload('body', new InputPipe(UpdateObjectRecordDto)) body: UpdateObjectRecordDto,
  ) {
    return presentWrite(await this.records.update(ctx, slug, id, body));
  }

  @MessagePattern(ObjectRecordsRpc.Delete)
  async remove(@Payload('params') { slug, id }: { slug: string; id: string }) {
    await this.records.remove(slug, id);
  }
}
