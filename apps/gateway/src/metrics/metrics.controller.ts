import { MessagingMetrics } from '@crm/messaging';
import { Controller, Get, Header } from '@nestjs/common';
import { Registry } from 'prom-client';
import { GatewayMetrics } from './gateway-metrics';
import { Scopes } from '../http/scopes';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';

@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly process: MessagingMetrics,
  ) {}

  @Get()
  @Scopes('public')
  @ApiOperation({ summary: 'Prometheus metrics of this gateway' })
  @ApiOkResponse({ content: { 'text/plain': { schema: { type: 'string' } } } })
  @Header('Content-Type', 'text/plain; version=0.0.4')
  render(): Promise<string> {
    return Registry.merge([this.metrics.registry, this.process.registry]).metrics();
  }
}
