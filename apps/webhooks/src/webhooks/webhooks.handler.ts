import { validateInput } from '@crm/common';
import { CreateWebhookDto, ListDeliveriesQuery, ListWebhooksQuery, ReplayWebhookDto, RpcRequest, UpdateWebhookDto, WebhooksRpc } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { WebhooksService } from './webhooks.service';

type WithId = RpcRequest<unknown, Record<string, unknown>, { id: string }>;

@Injectable()
export class WebhooksHandler {
  constructor(private readonly webhooks: WebhooksService) {}

  @RpcHandler(WebhooksRpc.Create)
  create(req: RpcRequest) {
    return this.webhooks.create(validateInput(CreateWebhookDto, req.body));
  }

  @RpcHandler(WebhooksRpc.List)
  list(req: RpcRequest) {
    return this.webhooks.list(validateInput(ListWebhooksQuery, req.query, 'query'));
  }

  @RpcHandler(WebhooksRpc.Get)
  get(req: WithId) {
    return this.webhooks.get(req.params.id);
  }

  @RpcHandler(WebhooksRpc.Update)
  update(req: WithId) {
    return this.webhooks.update(req.params.id, validateInput(UpdateWebhookDto, req.body));
  }

  @RpcHandler(WebhooksRpc.Delete)
  async remove(req: WithId) {
    await this.webhooks.remove(req.params.id);
  }

  @RpcHandler(WebhooksRpc.Deliveries)
  deliveries(req: WithId) {
    return this.webhooks.deliveries(req.params.id, validateInput(ListDeliveriesQuery, req.query, 'query'));
  }

  @RpcHandler(WebhooksRpc.Ping)
  ping(req: WithId) {
    return this.webhooks.ping(req.params.id);
  }

  @RpcHandler(WebhooksRpc.Replay)
  replay(req: WithId) {
    return this.webhooks.replay(req.params.id, validateInput(ReplayWebhookDto, req.body).event_id);
  }
}
