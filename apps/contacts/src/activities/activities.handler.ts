import { PageQuery, validateInput } from '@crm/common';
import { ActivitiesRpc, ContactsRpc, CreateActivityDto, ListActivitiesQuery, RpcRequest, UpdateActivityDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { ActivitiesService } from './activities.service';
import { presentActivity } from './activity.presenter';

@Injectable()
export class ActivitiesHandler {
  constructor(private readonly activities: ActivitiesService) {}

  @RpcHandler(ActivitiesRpc.Create)
  async create(req: RpcRequest) {
    return { data: presentActivity(await this.activities.create(req.ctx, validateInput(CreateActivityDto, req.body))) };
  }

  @RpcHandler(ActivitiesRpc.List)
  list(req: RpcRequest) {
    return this.activities.list(validateInput(ListActivitiesQuery, req.query, 'query'));
  }

  @RpcHandler(ActivitiesRpc.Get)
  async get(req: RpcRequest) {
    return { data: presentActivity(await this.activities.get(req.params.id)) };
  }

  @RpcHandler(ActivitiesRpc.Update)
  async update(req: RpcRequest) {
    return { data: presentActivity(await this.activities.update(req.ctx, req.params.id, validateInput(UpdateActivityDto, req.body))) };
  }

  @RpcHandler(ActivitiesRpc.Delete)
  async remove(req: RpcRequest) {
    await this.activities.remove(req.params.id);
  }

  @RpcHandler(ContactsRpc.ListActivities)
  listForContact(req: RpcRequest) {
    return this.activities.listForContact(req.params.id, validateInput(PageQuery, req.query, 'query'));
  }

  @RpcHandler(ContactsRpc.DealActivities)
  listForDeal(req: RpcRequest) {
    return this.activities.listForDeal(req.ctx, req.params.id, validateInput(PageQuery, req.query, 'query'));
  }
}
