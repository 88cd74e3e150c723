import { CreateWebhookDto, ListDeliveriesQuery, ListWebhooksQuery, Ops, ReplayWebhookDto, RequestContext, UpdateWebhookDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { WebhooksService } from './webhooks.service';

@Controller()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Handles(Ops.webhooks.create)
  create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateWebhookDto) {
    return this.webhooks.create(ctx, body);
  }

  @Handles(Ops.webhooks.list)
  list(@Payload('query') query: ListWebhooksQuery) {
    return this.webhooks.list(query);
  }

  @Handles(Ops.webhooks.get)
  get(@Payload('params') { id }: { id: string }) {
    return this.webhooks.get(id);
  }

  @Handles(Ops.webhooks.update)
  update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateWebhookDto) {
    return this.webhooks.update(ctx, id, body);
  }

  @Handles(Ops.webhooks.remove)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.webhooks.remove(id);
  }

  @Handles(Ops.webhooks.deliveries)
  deliveries(@Payload('params') { id }: { id: string }, @Payload('query') query: ListDeliveriesQuery) {
    return this.webhooks.deliveries(id, query);
  }

  @Handles(Ops.webhooks.ping)
  ping(@Payload('params') { id }: { id: string }) {
    return this.webhooks.ping(id);
  }

  @Handles(Ops.webhooks.replay)
  replay(@Payload('params') { id }: { id: string }, @Payload('body') body: ReplayWebhookDto) {
    return this.webhooks.replay(id, body.event_id);
  }
}
