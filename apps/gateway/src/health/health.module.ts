import { DependencyHealth } from '@crm/runtime';
import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { GatewayHealth } from './gateway-health';

/** The gateway's probes; served by the internal server on HEALTH_PORT (internal-server.ts), not by a controller. */
@Module({ imports: [TerminusModule], providers: [DependencyHealth, GatewayHealth], exports: [GatewayHealth] })
export class HealthModule {}
