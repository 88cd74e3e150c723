import { WebhooksRpc } from '@crm/contracts';
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
  create(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  list(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  get(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  update(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(WebhooksRpc.Delete, req);
  }

  @Get(':id/deliveries')
  @Scopes('read')
  deliveries(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Deliveries, req);
  }

  @Post(':id/ping')
  @Scopes('write')
  @HttpCode(200)
  ping(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Ping, req);
  }

  @Post(':id/replay')
  @Scopes('write')
  @HttpCode(200)
  replay(@Req() req: GatewayRequest) {
    return this.forward.to(WebhooksRpc.Replay, req);
  }
}
