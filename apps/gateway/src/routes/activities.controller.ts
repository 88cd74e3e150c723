import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { ActivitiesRpc, ActivityView, CreateActivityDto, ListActivitiesQuery, UpdateActivityDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('activities')
export class ActivitiesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, ActivityView, { summary: 'Log an activity', body: CreateActivityDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(ActivityView, { summary: 'List activities', query: ListActivitiesQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, ActivityView, { summary: 'Get an activity' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, ActivityView, { summary: 'Update an activity', body: UpdateActivityDto }, { warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ActivitiesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete an activity' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ActivitiesRpc.Delete, req);
  }
}
