import { ApiResponse } from '@nestjs/swagger';
import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CreateWebhookDto, DeliveryView, ListDeliveriesQuery, ListWebhooksQuery, PingResultView, ReplayWebhookDto, UpdateWebhookDto, WebhookView, WebhooksRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, WebhookView, { summary: 'Subscribe a URL to events', body: CreateWebhookDto }, { secret: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(WebhookView, { summary: 'List webhook subscriptions', query: ListWebhooksQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, WebhookView, { summary: 'Get a webhook subscription' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, WebhookView, { summary: 'Update a webhook subscription', body: UpdateWebhookDto })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a webhook subscription' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(WebhooksRpc.Delete, req);
  }

  @Get(':id/deliveries')
  @Scopes('read')
  @ApiPage(DeliveryView, { summary: 'List delivery attempts', query: ListDeliveriesQuery })
  deliveries(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Deliveries, req);
  }

  @Post(':id/ping')
  @Scopes('write')
  @HttpCode(200)
  @ApiResource(200, PingResultView, { summary: 'Send a signed test request now' })
  @ApiResponse({ status: 502, description: 'The endpoint answered non-2xx, timed out or could not be reached (`bad_gateway`).' })
  ping(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Ping, req);
  }

  @Post(':id/replay')
  @Scopes('write')
  @HttpCode(200)
  @ApiResource(200, WebhookView, { summary: 'Deliver one past event again', body: ReplayWebhookDto })
  replay(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Replay, req);
  }
}
