import { PageQuery } from '@crm/common';
import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CreateObjectTypeDto, FieldDefinitionDto, ListObjectTypesQuery, ObjectRecordInputDto, ObjectRecordView, ObjectRecordsRpc, ObjectSchemaView, ObjectTypesRpc, schemaRpcOf, UpdateFieldDefinitionDto, UpdateObjectRecordDto, UpdateObjectTypeDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

/**
 * Custom object types, custom fields (also of built-in objects) and custom object records: the contacts
 * service, except the custom fields of deals and pipelines, which the deals service keeps.
 */
@Controller('objects')
export class ObjectsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, ObjectSchemaView, { summary: 'Define a custom object', body: CreateObjectTypeDto })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(ObjectSchemaView, { summary: 'List objects', query: ListObjectTypesQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectTypesRpc.List, req);
  }

  @Get(':slug')
  @Scopes('read')
  @ApiResource(200, ObjectSchemaView, { summary: 'Describe one object' })
  get(@Req() req: GatewayRequest, @Param('slug') slug: string) {
    return this.forward.to(schemaRpcOf(slug).Get, req);
  }

  @Patch(':slug')
  @Scopes('write')
  @ApiResource(200, ObjectSchemaView, { summary: 'Rename, archive or set the enforcement level of an object', body: UpdateObjectTypeDto })
  update(@Req() req: GatewayRequest, @Param('slug') slug: string) {
    return this.forward.to(schemaRpcOf(slug).Update, req);
  }

  @Post(':slug/fields')
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, ObjectSchemaView, { summary: 'Add a field', body: FieldDefinitionDto })
  addField(@Req() req: GatewayRequest, @Param('slug') slug: string) {
    return this.forward.to(schemaRpcOf(slug).AddField, req);
  }

  @Patch(':slug/fields/:name')
  @Scopes('write')
  @ApiResource(200, ObjectSchemaView, { summary: 'Rename a field or change its label (stored values move to the new name)', body: UpdateFieldDefinitionDto })
  updateField(@Req() req: GatewayRequest, @Param('slug') slug: string) {
    return this.forward.to(schemaRpcOf(slug).UpdateField, req);
  }

  @Delete(':slug/fields/:name')
  @Scopes('write')
  @ApiResource(200, ObjectSchemaView, { summary: 'Remove a field and every value stored under it' })
  removeField(@Req() req: GatewayRequest, @Param('slug') slug: string) {
    return this.forward.to(schemaRpcOf(slug).RemoveField, req);
  }

  @Post(':slug/records')
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, ObjectRecordView, { summary: 'Create a record', body: ObjectRecordInputDto }, { warnings: true })
  createRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Create, req);
  }

  @Get(':slug/records')
  @Scopes('read')
  @ApiPage(ObjectRecordView, { summary: 'List records', query: PageQuery })
  listRecords(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.List, req);
  }

  @Get(':slug/records/:id')
  @Scopes('read')
  @ApiResource(200, ObjectRecordView, { summary: 'Get a record' })
  getRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Get, req);
  }

  @Patch(':slug/records/:id')
  @Scopes('write')
  @ApiResource(200, ObjectRecordView, { summary: 'Update a record', body: UpdateObjectRecordDto }, { warnings: true })
  updateRecord(@Req() req: GatewayRequest) {
    return this.forward.to(ObjectRecordsRpc.Update, req);
  }

  @Delete(':slug/records/:id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a record' })
  async removeRecord(@Req() req: GatewayRequest) {
    await this.forward.to(ObjectRecordsRpc.Delete, req);
  }
}
