import { Controller, Get, Header } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { Scopes } from '../http/scopes';

@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: GatewayMetrics) {}

  @Get()
  @Scopes('public')
  @Header('Content-Type', 'text/plain; version=0.0.4')
  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
