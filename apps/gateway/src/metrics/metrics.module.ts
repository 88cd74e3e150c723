import { Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { MetricsController } from './metrics.controller';

@Module({ controllers: [MetricsController], providers: [GatewayMetrics], exports: [GatewayMetrics] })
export class MetricsModule {}
