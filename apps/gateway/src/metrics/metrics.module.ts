import { Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';

/** The gateway's metrics; the internal server on HEALTH_PORT serves them at /metrics (not the API port). */
@Module({ providers: [GatewayMetrics], exports: [GatewayMetrics] })
export class MetricsModule {}
