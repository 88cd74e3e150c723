import { PageQuery, validateInput } from '@crm/common';
import { ContactsRpc, CreateTaskDto, ListTasksQuery, RpcRequest, TasksRpc, UpdateTaskDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { presentTask } from './task.presenter';
import { TasksService } from './tasks.service';

@Injectable()
export class TasksHandler {
  constructor(private readonly tasks: TasksService) {}

  @RpcHandler(TasksRpc.Create)
  async create(req: RpcRequest) {
    return { data: presentTask(await this.tasks.create(req.ctx, validateInput(CreateTaskDto, req.body))) };
  }

  @RpcHandler(TasksRpc.List)
  list(req: RpcRequest) {
    return this.tasks.list(validateInput(ListTasksQuery, req.query, 'query'));
  }

  @RpcHandler(TasksRpc.Get)
  async get(req: RpcRequest) {
    return { data: presentTask(await this.tasks.get(req.params.id)) };
  }

  @RpcHandler(TasksRpc.Update)
  async update(req: RpcRequest) {
    return { data: presentTask(await this.tasks.update(req.ctx, req.params.id, validateInput(UpdateTaskDto, req.body))) };
  }

  @RpcHandler(TasksRpc.Delete)
  async remove(req: RpcRequest) {
    await this.tasks.remove(req.params.id);
  }

  @RpcHandler(ContactsRpc.ListTasks)
  listForContact(req: RpcRequest) {
    return this.tasks.listForContact(req.params.id, validateInput(PageQuery, req.query, 'query'));
  }

  @RpcHandler(ContactsRpc.DealTasks)
  listForDeal(req: RpcRequest) {
    return this.tasks.listForDeal(req.ctx, req.params.id, validateInput(PageQuery, req.query, 'query'));
  }
}
