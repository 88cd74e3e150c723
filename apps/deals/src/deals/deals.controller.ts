import { InputPipe, PageQuery } from '@crm/common';
import { CreateDealDto, DealsRpc, ListDealsQuery, MoveDealStageDto, RequestContext, UpdateDealDto } from '@crm/contracts';
import { SoftWarningsInterceptor } from '@crm/runtime';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DealsService } from './deals.service';

@Controller()
export class DealsController {
  constructor(private readonly deals: DealsService) {}

  @MessagePattern(DealsRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(CreateDealDto)) body: CreateDealDto,
  ) {
    return { data: await this.deals.create(ctx, body) };
  }

  @MessagePattern(DealsRpc.List)
  list(@Payload('query', new InputPipe(ListDealsQuery, 'query')) query: ListDealsQuery) {
    return this.deals.list(query);
  }

  @MessagePattern(DealsRpc.Get)
  get(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return this.deals.get(ctx, id);
  }

  @MessagePattern(DealsRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateDealDto)) body: UpdateDealDto,
  ) {
    return this.deals.update(ctx, id, body);
  }

  @MessagePattern(DealsRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.deals.remove(id);
  }

  @MessagePattern(DealsRpc.MoveStage)
  moveStage(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(MoveDealStageDto)) body: MoveDealStageDto,
  ) {
    return this.deals.moveStage(ctx, id, body.stage_id);
  }

  @MessagePattern(DealsRpc.History)
  history(
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery,
  ) {
    return this.deals.history(id, query);
  }
}
