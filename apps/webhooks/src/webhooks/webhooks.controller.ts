import { InputPipe } from '@crm/common';
import { CreateWebhookDto, ListDeliveriesQuery, ListWebhooksQuery, ReplayWebhookDto, UpdateWebhookDto, WebhooksRpc } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { WebhooksService } from './webhooks.service';

@Controller()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @MessagePattern(WebhooksRpc.Create)
  create(@Payload('body', new InputPipe(CreateWebhookDto)) body: CreateWebhookDto) {
    return this.webhooks.create(body);
  }

  @MessagePattern(WebhooksRpc.List)
  list(@Payload('query', new InputPipe(ListWebhooksQuery, 'query')) query: ListWebhooksQuery) {
    return this.webhooks.list(query);
  }

  @MessagePattern(WebhooksRpc.Get)
  get(@Payload('params') { id }: { id: string }) {
    return this.webhooks.get(id);
  }

  @MessagePattern(WebhooksRpc.Update)
  update(
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateWebhookDto)) body: UpdateWebhookDto,
  ) {
    return this.webhooks.update(id, body);
  }

  @MessagePattern(WebhooksRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.webhooks.remove(id);
  }

  @MessagePattern(WebhooksRpc.Deliveries)
  deliveries(
    @Payload('params') { id }: { id: string },
    @Payload('query', new InputPipe(ListDeliveriesQuery, 'query')) query: ListDeliveriesQuery,
  ) {
    return this.webhooks.deliveries(id, query);
  }

  @MessagePattern(WebhooksRpc.Ping)
  ping(@Payload('params') { id }: { id: string }) {
    return this.webhooks.ping(id);
  }

  @MessagePattern(WebhooksRpc.Replay)
  replay(
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(ReplayWebhookDto)) body: ReplayWebhookDto,
  ) {
    return this.webhooks.replay(id, body.event_id);
  }
}
