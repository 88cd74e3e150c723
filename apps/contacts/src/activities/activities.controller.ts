import { InputPipe, PageQuery } from '@crm/common';
import { ActivitiesRpc, ContactsRpc, CreateActivityDto, ListActivitiesQuery, RequestContext, UpdateActivityDto } from '@crm/contracts';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ActivitiesService } from './activities.service';
import { SoftWarningsInterceptor } from '@crm/runtime';

@Controller()
export class ActivitiesController {
  constructor(private readonly activities: ActivitiesService) {}

  @MessagePattern(ActivitiesRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(CreateActivityDto)) body: CreateActivityDto,
  ) {
    return { data: await this.activities.create(ctx, body) };
  }

  @MessagePattern(ActivitiesRpc.List)
  list(@Payload('query', new InputPipe(ListActivitiesQuery, 'query')) query: ListActivitiesQuery) {
    return this.activities.list(query);
  }

  @MessagePattern(ActivitiesRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.activities.get(id) };
  }

  @MessagePattern(ActivitiesRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateActivityDto)) body: UpdateActivityDto,
  ) {
    return { data: await this.activities.update(ctx, id, body) };
  }

  @MessagePattern(ActivitiesRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.activities.remove(id);
  }

  @MessagePattern(ContactsRpc.ListActivities)
  listForContact(
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.activities.listForContact(id, query);
  }

  @MessagePattern(ContactsRpc.DealActivities)
  listForDeal(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.activities.listForDeal(ctx, id, query);
  }
}
