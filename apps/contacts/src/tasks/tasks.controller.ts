import { InputPipe, PageQuery } from '@crm/common';
import { ContactsRpc, CreateTaskDto, ListTasksQuery, RequestContext, TasksRpc, UpdateTaskDto } from '@crm/contracts';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { TasksService } from './tasks.service';
import { SoftWarningsInterceptor } from '@crm/runtime';

@Controller()
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @MessagePattern(TasksRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(CreateTaskDto)) body: CreateTaskDto,
  ) {
    return { data: await this.tasks.create(ctx, body) };
  }

  @MessagePattern(TasksRpc.List)
  list(@Payload('query', new InputPipe(ListTasksQuery, 'query')) query: ListTasksQuery) {
    return this.tasks.list(query);
  }

  @MessagePattern(TasksRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.tasks.get(id) };
  }

  @MessagePattern(TasksRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateTaskDto)) body: UpdateTaskDto,
  ) {
    return { data: await this.tasks.update(ctx, id, body) };
  }

  @MessagePattern(TasksRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.tasks.remove(id);
  }

  @MessagePattern(ContactsRpc.ListTasks)
  listForContact(
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.tasks.listForContact(id, query);
  }

  @MessagePattern(ContactsRpc.DealTasks)
  listForDeal(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.tasks.listForDeal(ctx, id, query);
  }
}
