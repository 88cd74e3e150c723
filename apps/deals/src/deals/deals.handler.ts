import { PageQuery, validateInput } from '@crm/common';
import { CreateDealDto, DealsRpc, ListDealsQuery, MoveDealStageDto, RpcRequest, UpdateDealDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DealsService } from './deals.service';

type IdParams = { id: string };

@Injectable()
export class DealsHandler {
  constructor(private readonly deals: DealsService) {}

  @RpcHandler(DealsRpc.Create)
  async create(req: RpcRequest) {
    return { data: await this.deals.create(req.ctx, validateInput(CreateDealDto, req.body)) };
  }

  @RpcHandler(DealsRpc.List)
  list(req: RpcRequest) {
    return this.deals.list(validateInput(ListDealsQuery, req.query, 'query'));
  }

  @RpcHandler(DealsRpc.Get)
  get(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return this.deals.get(req.ctx, req.params.id);
  }

  @RpcHandler(DealsRpc.Update)
  update(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return this.deals.update(req.ctx, req.params.id, validateInput(UpdateDealDto, req.body));
  }

  @RpcHandler(DealsRpc.Delete)
  async remove(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    await this.deals.remove(req.params.id);
  }

  @RpcHandler(DealsRpc.MoveStage)
  moveStage(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return this.deals.moveStage(req.ctx, req.params.id, validateInput(MoveDealStageDto, req.body).stage_id);
  }

  @RpcHandler(DealsRpc.History)
  history(req: RpcRequest<unknown, Record<string, unknown>, IdParams>) {
    return this.deals.history(req.params.id, validateInput(PageQuery, req.query, 'query'));
  }
}
