import { ApiResponse } from '@nestjs/swagger';
import { PageQuery } from '@crm/common';
import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { ActivitySummaryView, ContactSummaryView, ContactView, ContactsRpc, CreateContactDto, DealSummary, ListContactsQuery, MergeContactsDto, TaskSummaryView, UpdateContactDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('contacts')
export class ContactsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, ContactSummaryView, { summary: 'Create a contact', body: CreateContactDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(ContactSummaryView, { summary: 'List contacts', query: ListContactsQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.List, req);
  }

  @Post('merge')
  @Scopes('write')
  @HttpCode(200)
  @ApiResource(200, ContactView, { summary: 'Merge two contacts into the winner', body: MergeContactsDto }, { included: true })
  @ApiResponse({ status: 404, description: 'The winner or the loser does not exist (`not_found`).' })
  merge(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Merge, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, ContactView, { summary: 'Get a contact' }, { included: true })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, ContactView, { summary: 'Update a contact', body: UpdateContactDto }, { included: true, warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a contact' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(ContactsRpc.Delete, req);
  }

  @Get(':id/deals')
  @Scopes('read')
  @ApiPage(DealSummary, { summary: "List a contact's deals", query: PageQuery })
  deals(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListDeals, req);
  }

  @Get(':id/activities')
  @Scopes('read')
  @ApiPage(ActivitySummaryView, { summary: "List a contact's activities", query: PageQuery })
  activities(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListActivities, req);
  }

  @Get(':id/tasks')
  @Scopes('read')
  @ApiPage(TaskSummaryView, { summary: "List a contact's tasks", query: PageQuery })
  tasks(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.ListTasks, req);
  }
}
