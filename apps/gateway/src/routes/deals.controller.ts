import { PageQuery } from '@crm/common';
import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { ActivitySummaryView, ContactsRpc, CreateDealDto, DealView, DealsRpc, FullDealView, ListDealsQuery, MoveDealStageDto, StageHistoryView, TaskSummaryView, UpdateDealDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('deals')
export class DealsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, DealView, { summary: 'Create a deal', body: CreateDealDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(DealView, { summary: 'List deals', query: ListDealsQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, FullDealView, { summary: 'Get a deal' }, { included: true })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, FullDealView, { summary: 'Update a deal', body: UpdateDealDto }, { included: true, warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a deal' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(DealsRpc.Delete, req);
  }

  @Post(':id/stage')
  @Scopes('write')
  @HttpCode(200)
  @ApiResource(200, FullDealView, { summary: 'Move a deal to another stage', body: MoveDealStageDto }, { included: true })
  moveStage(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.MoveStage, req);
  }

  @Get(':id/history')
  @Scopes('read')
  @ApiPage(StageHistoryView, { summary: "List a deal's stage changes, oldest first", query: PageQuery })
  history(@Req() req: GatewayRequest) {
    return this.forward.to(DealsRpc.History, req);
  }

  /** Activities and tasks are kept by the contacts service. */
  @Get(':id/activities')
  @Scopes('read')
  @ApiPage(ActivitySummaryView, { summary: "List a deal's activities", query: PageQuery })
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealActivities, req);
  }

  @Get(':id/tasks')
  @Scopes('read')
  @ApiPage(TaskSummaryView, { summary: "List a deal's tasks", query: PageQuery })
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.DealTasks, req);
  }
}
