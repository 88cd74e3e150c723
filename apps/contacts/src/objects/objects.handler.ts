import { PageQuery, validateInput } from '@crm/common';
import {
  CreateObjectTypeDto,
  FieldDefinitionDto,
  ListObjectTypesQuery,
  ObjectRecordInputDto,
  ObjectRecordsRpc,
  ObjectTypesRpc,
  RpcRequest,
  UpdateObjectRecordDto,
  UpdateObjectTypeDto,
  ValidationWarning,
} from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
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

@Injectable()
export class ObjectTypesHandler {
  constructor(private readonly types: ObjectTypesService) {}

  @RpcHandler(ObjectTypesRpc.Create)
  async create(req: RpcRequest) {
    return { data: presentObjectType(await this.types.create(validateInput(CreateObjectTypeDto, req.body))) };
  }

  @RpcHandler(ObjectTypesRpc.List)
  list(req: RpcRequest) {
    return this.types.list(validateInput(ListObjectTypesQuery, req.query, 'query'));
  }

  @RpcHandler(ObjectTypesRpc.Get)
  async get(req: RpcRequest) {
    return { data: await this.types.view(req.params.slug) };
  }

  @RpcHandler(ObjectTypesRpc.Update)
  async update(req: RpcRequest) {
    return { data: await this.types.update(req.params.slug, validateInput(UpdateObjectTypeDto, req.body)) };
  }

  @RpcHandler(ObjectTypesRpc.AddField)
  async addField(req: RpcRequest) {
    return { data: await this.types.addField(req.params.slug, validateInput(FieldDefinitionDto, req.body)) };
  }
}

@Injectable()
export class ObjectRecordsHandler {
  constructor(private readonly records: ObjectRecordsService) {}

  @RpcHandler(ObjectRecordsRpc.Create)
  async create(req: RpcRequest) {
    return presentWrite(await this.records.create(req.ctx, req.params.slug, validateInput(ObjectRecordInputDto, req.body)));
  }

  @RpcHandler(ObjectRecordsRpc.List)
  list(req: RpcRequest) {
    return this.records.list(req.params.slug, validateInput(PageQuery, req.query, 'query'));
  }

  @RpcHandler(ObjectRecordsRpc.Get)
  async get(req: RpcRequest) {
    const { record, type } = await this.records.get(req.params.slug, req.params.id);
    return { data: presentRecord(record, type) };
  }

  @RpcHandler(ObjectRecordsRpc.Update)
  async update(req: RpcRequest) {
    return presentWrite(await this.records.update(req.ctx, req.params.slug, req.params.id, validateInput(UpdateObjectRecordDto, req.body)));
  }

  @RpcHandler(ObjectRecordsRpc.Delete)
  async remove(req: RpcRequest) {
    await this.records.remove(req.params.slug, req.params.id);
  }
}
