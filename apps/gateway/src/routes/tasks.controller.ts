import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CreateTaskDto, ListTasksQuery, TaskView, TasksRpc, UpdateTaskDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('tasks')
export class TasksController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, TaskView, { summary: 'Create a task', body: CreateTaskDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(TasksRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(TaskView, { summary: 'List tasks', query: ListTasksQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(TasksRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, TaskView, { summary: 'Get a task' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(TasksRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, TaskView, { summary: 'Update a task', body: UpdateTaskDto }, { warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(TasksRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a task' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(TasksRpc.Delete, req);
  }
}
